package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// genericServer is a scenario of real servers run by command: nodes of
// them, the command given, with more keys for [server] and the rest
// (a workload) appended.
func genericServer(t *testing.T, nodes int, command, server, rest string) string {
	t.Helper()
	return writeScenario(t, t.TempDir(), "svc.toml", fmt.Sprintf(`name = "svc"
nodes = %d
duration = "1s"

[server]
command = %s
ports = ["peer", "client"]
peer = ["peer"]
start_timeout = "5s"
%s

[[server.log]]
match = '(?P<self>n[0-9]+) leads at term (?P<term>[0-9]+)'
role = "leader"
%s`, nodes, command, server, rest))
}

// More servers than coup can start are refused as the scenario is
// validated, by coup list and coup run alike (and through --set), with
// the file, nodes and the bound: 254 by the loopback layout, fewer by the
// open-file limit, which the error names. Nothing is run.
func TestTooManyServersRefused(t *testing.T) {
	three := genericServer(t, 3, `["sleep", "10"]`, "", "")
	many := genericServer(t, 300, `["sleep", "10"]`, "", "")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"list", []string{"list", many}, []string{many + ":2:1: nodes: at most 254 servers fit coup's loopback layout", "got 300"}},
		{"run", []string{"run", many}, []string{many + ":2:1: nodes: at most 254 servers fit coup's loopback layout", "got 300"}},
		{"run --set", []string{"run", "--set", "nodes=255", three}, []string{"--set nodes=255: at most 254 servers fit coup's loopback layout", "got 255", three}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := coup(t, c.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if _, err := os.Stat(r.store); err == nil {
				t.Errorf("a refused scenario was run: %s exists", r.store)
			}
		})
	}
	// Under an open-file limit of 1000, 30 servers with a proxy per
	// ordered pair do not fit; the error says how many do.
	thirty := genericServer(t, 30, `["sleep", "10"]`, "", "")
	for _, cmd := range []string{"list", "run"} {
		sh := exec.Command("sh", "-c", `ulimit -n 1000 && exec "$0" "$@"`, coupBin, cmd, thirty)
		sh.Dir = t.TempDir()
		var out bytes.Buffer
		sh.Stdout, sh.Stderr = &out, &out
		err := sh.Run()
		if code := exitCode(t, err); code != 2 {
			t.Errorf("%s under ulimit -n 1000: exit %d, want 2\n%s", cmd, code, out.String())
		}
		if !regexp.MustCompile(regexp.QuoteMeta(thirty) + `:2:1: nodes: at most [0-9]+ servers fit this machine's open-file limit \(ulimit -n: 1000\), got 30`).MatchString(out.String()) {
			t.Errorf("%s under ulimit -n 1000 does not give the open-file bound:\n%s", cmd, out.String())
		}
	}
}

// A server that fails to start says why, in its own words (the end of
// its log), once, on the console and in the run's folder (results.json,
// harness.log, the history); coup check reads that history as a failed
// start, with the same cause, never as "not a coup history".
func TestServerStartFailureSaysWhy(t *testing.T) {
	file := genericServer(t, 2, `["sh", "-c", "echo no such luck >&2; exit 3"]`, "", "")
	r := coup(t, "run", file)
	if r.code != 2 {
		t.Errorf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := len(regexp.MustCompile(`(?m)^coup: `).FindAllString(r.stderr, -1)); n != 1 || !strings.Contains(r.stderr, "exited before it accepted connections") || !strings.Contains(r.stderr, "| no such luck") {
		t.Errorf("want one message with the server's own words:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "not a coup history") || strings.Contains(r.stdout, "valid=") {
		t.Errorf("a failed start reads as a bad history, or is judged:\n%s%s", r.stdout, r.stderr)
	}
	dir := filepath.Join(r.store, "svc", "latest")
	res := readResults(t, dir)
	if res.Exit != 2 || len(res.Checks) != 0 {
		t.Errorf("results.json: exit %d with %d checks, want 2 and none", res.Exit, len(res.Checks))
	}
	for _, f := range []string{"results.json", "harness.log", "history.jsonl"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); !strings.Contains(string(b), "no such luck") {
			t.Errorf("%s does not say why the run did not start:\n%s", f, b)
		}
	}
	check := coup(t, "check", filepath.Join(dir, "history.jsonl"))
	if check.code != 2 || !strings.Contains(check.stdout, "not run (exit 2)") || !strings.Contains(check.stdout, "no such luck") {
		t.Errorf("coup check: exit %d, want 2 with the cause:\n%s%s", check.code, check.stdout, check.stderr)
	}
}

// SIGINT while the client processes start (one that is slow to build:
// here it never answers) says that the run was interrupted, and where,
// with exit 3: never "not a coup history", never a verdict that stands.
// Nothing is left running, and coup check reads the history the same.
func TestInterruptedStartSaysSo(t *testing.T) {
	file := genericServer(t, 2, `["sleep", "10"]`, `adapter = ["sh", "-c", "exec sleep 60"]`,
		"\n[workload]\nkind = \"lin-kv\"\nclients = 1\n")
	store := t.TempDir()
	tag := tagged(t)
	cmd, out := startRun(t, tag, "--store", store, file)
	waitFor(t, cmd, "the client process start", func() bool { return strings.Contains(out.String(), "starting 1 client process") })
	cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(t, cmd.Wait())
	checkNoSurvivors(t, tag)
	got := out.String()
	if code != 3 {
		t.Errorf("exit %d, want 3\n%s", code, got)
	}
	for _, w := range []string{"interrupted while starting 1 client process", "interrupted before the run's nodes were up: it has no verdict (exit 3)"} {
		if !strings.Contains(got, w) {
			t.Errorf("the output lacks %q:\n%s", w, got)
		}
	}
	for _, w := range []string{"not a coup history", "verdict stands", "no verdict: ", "valid="} {
		if strings.Contains(got, w) {
			t.Errorf("the output says %q:\n%s", w, got)
		}
	}
	check := coup(t, "check", filepath.Join(store, "svc", "latest", "history.jsonl"))
	if check.code != 3 || !strings.Contains(check.stdout, "interrupted while starting 1 client process") {
		t.Errorf("coup check: exit %d, want 3 with the interruption:\n%s%s", check.code, check.stdout, check.stderr)
	}
}

// SIGINT while node processes answer init (one never does) says the run
// was interrupted before every node was up: no verdict, exit 3.
func TestInterruptedNodeStartSaysSo(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "slow.toml", "command = [\"sh\", \"-c\", \"exec sleep 60\"]\nnodes = 2\ninit_timeout = \"30s\"\n")
	store := t.TempDir()
	tag := tagged(t)
	cmd, out := startRun(t, tag, "--store", store, file)
	waitFor(t, cmd, "the nodes' start", func() bool { return strings.Contains(out.String(), "starting 2 nodes") })
	cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(t, cmd.Wait())
	checkNoSurvivors(t, tag)
	got := out.String()
	if code != 3 || !strings.Contains(got, "interrupted before every node was up") || !strings.Contains(got, "it has no verdict (exit 3)") || strings.Contains(got, "verdict stands") || strings.Contains(got, "valid=") {
		t.Errorf("exit %d, want 3 and an interrupted start without a verdict:\n%s", code, got)
	}
}
