package servers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// fakeAdapter is a client adapter for the tests, over a service of its
// own memory: a kv store and a lock with tokens. Before its init_ok it
// writes a line of chatter; after, a line that is no message, a line
// longer than a client may write, and an answer to no request, all of
// which coup must skip; and it answers its first request with an answer
// of the wrong type before the right one. Modes: "serve" answers everything; "exit" exits
// instead of answering its third request.
func fakeAdapter(mode string) {
	if mode == "probe" {
		probeAdapter()
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 2<<20)
	out := bufio.NewWriter(os.Stdout)
	line := func(s string) {
		out.WriteString(s + "\n")
		out.Flush()
	}
	kv := map[int]int{}
	token, holder, requests := int64(0), "", 0
	for in.Scan() {
		var env struct {
			Src, Dest string
			Body      map[string]any
		}
		if json.Unmarshal(in.Bytes(), &env) != nil {
			continue
		}
		typ, _ := env.Body["type"].(string)
		id, _ := env.Body["msg_id"].(float64)
		reply := func(body map[string]any) {
			body["in_reply_to"] = int(id)
			b, _ := json.Marshal(map[string]any{"src": env.Dest, "dest": env.Src, "body": body})
			line(string(b))
		}
		if typ == "init" {
			line("starting up")
			reply(map[string]any{"type": "init_ok"})
			line("not a message at all")
			line(`{"src":"n1","dest":"c1","body":{"type":"read_ok","in_reply_to":999,"value":1}}`)
			line(strings.Repeat("x", MaxAdapterLine+10))
			continue
		}
		requests++
		if mode == "exit" && requests == 3 {
			os.Exit(3)
		}
		if requests == 1 { // an answer of the wrong type first: skipped
			reply(map[string]any{"type": "bogus_ok"})
		}
		key := int(num(env.Body["key"]))
		switch typ {
		case "read":
			if v, ok := kv[key]; ok {
				reply(map[string]any{"type": "read_ok", "value": v})
			} else {
				reply(map[string]any{"type": "error", "code": 20, "text": "no such key"})
			}
		case "write":
			kv[key] = int(num(env.Body["value"]))
			reply(map[string]any{"type": "write_ok"})
		case "cas":
			if v, ok := kv[key]; !ok {
				reply(map[string]any{"type": "error", "code": 20})
			} else if v != int(num(env.Body["from"])) {
				reply(map[string]any{"type": "error", "code": 22})
			} else {
				kv[key] = int(num(env.Body["to"]))
				reply(map[string]any{"type": "cas_ok"})
			}
		case "acquire":
			token++
			holder, _ = env.Body["value"].(string)
			reply(map[string]any{"type": "acquire_ok", "token": token, "value": fmt.Sprintf("lease %d", token)})
		case "release":
			if holder == "" {
				reply(map[string]any{"type": "error", "code": 14})
				continue
			}
			holder = ""
			reply(map[string]any{"type": "release_ok"})
		default:
			reply(map[string]any{"type": "error", "code": 10})
		}
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// adapterScenario is the peer scenario driven by one client of the fake
// adapter in mode, with rest appended (a workload, checks, faults).
func adapterScenario(t *testing.T, mode, rest string) (*history.History, string, map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sc := peerScenarioWith(t, fmt.Sprintf(`adapter = ["sh", "-c", "COUP_TEST_ADAPTER=%s exec %s {{.Client}}"]`, mode, exe), rest)
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, c := range res.Checks {
		verdicts[c.Name] = fmt.Sprint(c.Valid)
	}
	return h, dir, verdicts
}

// oneClientKV is a lin-kv workload of one client, judged.
const oneClientKV = `
[workload]
kind = "lin-kv"
at = "100ms"
clients = 1
targets = ["n1"]
rate = 50
keys = 1
values = 3
timeout = "1s"

[checks]
run = ["kv-linearizable"]
`

// A scenario's adapter carries the lin-kv workload: every operation goes
// to the client's process and its answer comes back, matched by
// in_reply_to, so the history is complete and linearizable; what the
// process writes that is no answer (chatter before its init_ok, a line
// that is no message, one too long, an answer to no request) is skipped
// and noted in the client's log; and the process is gone after the run.
func TestAdapterCarriesTheWorkload(t *testing.T) {
	h, dir, verdicts := adapterScenario(t, "serve", oneClientKV)
	ok, other := 0, 0
	for e := range h.All() {
		if e.Kind != history.KindOp || e.Type == history.OpInvoke {
			continue
		}
		if e.Type == history.OpOK {
			ok++
		} else if e.Type == history.OpInfo {
			other++
		}
	}
	if ok < 5 || other > 1 {
		t.Errorf("%d ok and %d info operations, want many ok and at most the one the end cut short", ok, other)
	}
	if verdicts["kv-linearizable"] != fmt.Sprint(checks.True) {
		t.Errorf("kv-linearizable %s, want true", verdicts["kv-linearizable"])
	}
	b, err := os.ReadFile(filepath.Join(dir, "c1.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"not a message: \"starting up\"", "not a message", "longer than", "in_reply_to 999", "an answer of type \"bogus_ok\""} {
		if !strings.Contains(string(b), want) {
			t.Errorf("c1.log lacks %q:\n%s", want, b)
		}
	}
	checkAdapterGone(t, dir)
}

// checkAdapterGone fails when the client process a run's log names is
// still running.
func checkAdapterGone(t *testing.T, dir string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "harness.log"))
	var pid int
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "c1: client process started, pid "); i >= 0 {
			fmt.Sscan(l[i+len("c1: client process started, pid "):], &pid)
		}
	}
	if pid == 0 {
		t.Fatalf("harness.log names no client process:\n%s", b)
	}
	if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
		t.Errorf("client process %d still running after the run", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// A client process that exits leaves the operation it was carrying
// unknown (info), and every later one surely not done (fail): its input
// is closed.
func TestAdapterThatExits(t *testing.T) {
	h, dir, _ := adapterScenario(t, "exit", oneClientKV)
	var types []string
	for e := range h.All() {
		if e.Kind == history.KindOp && e.Type != history.OpInvoke {
			types = append(types, e.Type)
		}
	}
	if len(types) < 4 || types[2] != history.OpInfo || types[3] != history.OpFail {
		t.Errorf("completions %v, want two answered, the third info, then failures", types)
	}
	// Its exit is a finding: recorded with its status, and in results.json.
	var exit *history.Event
	for e := range h.All() {
		if e.Kind == history.KindProcess && e.What == history.ProcPartExit {
			exit = e
		}
	}
	if exit == nil || exit.Process != "c1" || exit.Detail == "" {
		t.Fatalf("the history's exit of c1's process: %+v", exit)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res verdict.Results
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Exits) != 1 || res.Exits[0].Process != "client c1" || res.Exits[0].Expected || res.ExitCode != verdict.ExitUnexpected {
		t.Errorf("results.json: exits %+v, exit code %d; want c1's process, unexpected", res.Exits, res.ExitCode)
	}
}

// A pause whose target is "holder", begun at the first grant (so that a
// slow start cannot leave it no holder to pause), stops the process of
// the client that holds the lock (SIGSTOP) and continues it at its end: the release the
// workload asks for while the holder is paused is answered only after
// the resume.
func TestHolderPauseStopsTheClientProcess(t *testing.T) {
	h, dir, verdicts := adapterScenario(t, "serve", `
[workload]
kind = "mutex"
at = "100ms"
clients = 1
targets = ["n1"]
rate = 50
hold = "100ms"
timeout = "2s"

[[faults]]
kind = "pause"
target = "holder"
when = { op = "acquire" }
for = "400ms"

[checks]
run = ["mutex-linearizable", "fencing"]
`)
	var pausedAt, resumedAt int64 = -1, -1
	for e := range h.All() {
		if e.Kind == history.KindNemesis && len(e.Nodes) == 1 && e.Nodes[0] == "c1" {
			if e.Phase == history.PhaseStart {
				pausedAt = e.Time
			} else {
				resumedAt = e.Time
			}
		}
	}
	if pausedAt < 0 || resumedAt < 0 {
		t.Fatalf("no pause and resume of c1 in the history (paused %d, resumed %d)", pausedAt, resumedAt)
	}
	var invoked int64 = -1
	late := false
	for e := range h.All() {
		if e.Kind != history.KindOp || e.F != "release" {
			continue
		}
		switch {
		case e.Type == history.OpInvoke && e.Time > pausedAt && e.Time < resumedAt:
			invoked = e.Time
		case e.Type == history.OpOK && invoked >= 0:
			late = late || e.Time >= resumedAt
			invoked = -1
		}
	}
	if !late {
		t.Errorf("no release asked during the pause (%s to %s) was answered after it", time.Duration(pausedAt), time.Duration(resumedAt))
	}
	if verdicts["mutex-linearizable"] != fmt.Sprint(checks.True) || verdicts["fencing"] != fmt.Sprint(checks.True) {
		t.Errorf("verdicts %v, want mutex-linearizable and fencing true (one client)", verdicts)
	}
	checkAdapterGone(t, dir)
}

// A server that exits on its own is a finding: said on the console with
// the end of its log, in results.json, and the run is unexpected unless
// the scenario expects it.
func TestServerExitIsAFinding(t *testing.T) {
	t.Setenv("COUP_TEST_PEER_EXIT", "n2")
	for _, c := range []struct {
		expect string
		code   int
	}{{"", verdict.ExitUnexpected}, {"[expect]\nexits = [\"n2\"]\n", verdict.ExitOK}} {
		sc := peerScenarioWith(t, "", c.expect)
		sc.Duration.D = 4 * time.Second // past the exit, 1.5s after the server's start
		var console strings.Builder
		res, _, err := Run(context.Background(), sc, Options{Store: t.TempDir(), Progress: &console})
		if err != nil || res.NotStarted() {
			t.Fatalf("run: %v %+v", err, res)
		}
		if len(res.Exits) != 1 || res.Exits[0].Process != "n2" || res.Exits[0].Status != "exit status 4" || !strings.Contains(strings.Join(res.Exits[0].Log, "\n"), "n2: giving up") {
			t.Errorf("exits %+v, want n2's with its status and log", res.Exits)
		}
		if res.ExitCode != c.code {
			t.Errorf("expect %q: exit %d, want %d: %s", c.expect, res.ExitCode, c.code, res.Summary())
		}
		if !strings.Contains(console.String(), "n2 exited on its own at ") || !strings.Contains(console.String(), "| n2: giving up") {
			t.Errorf("the console does not say n2 exited:\n%s", console.String())
		}
	}
}

// A sidecar that exits on its own is a finding too, and its host runs on:
// the checks still see the node up.
func TestSidecarExitIsAFinding(t *testing.T) {
	t.Setenv("COUP_TEST_PEER_EXIT", "n2-side")
	sc := hostScenario(t, "")
	sc.Duration.D = 4 * time.Second // past the exit, 1.5s after the sidecar's start
	res, _, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %+v", err, res)
	}
	if len(res.Exits) != 1 || res.Exits[0].Process != "n2 sidecar side" || res.Exits[0].Node != "n2" || res.Exits[0].Status != "exit status 4" || !strings.Contains(strings.Join(res.Exits[0].Log, "\n"), "n2-side: giving up") {
		t.Errorf("exits %+v, want n2's sidecar's with its status and log", res.Exits)
	}
	if res.ExitCode != verdict.ExitUnexpected {
		t.Errorf("exit %d, want %d: %s", res.ExitCode, verdict.ExitUnexpected, res.Summary())
	}
	if c := res.Checks["two-leaders"]; c.Valid != checks.True {
		t.Errorf("two-leaders %v (%s): the host is still up, its server leading or following", c.Valid, c.Explanation)
	}
}
