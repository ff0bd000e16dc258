package harness

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/nodes/algorithms"
	"github.com/coupharness/coup/nodes/process"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// TestMain lets the test binary be the built-in node program too: run as
// "<test binary> node --algo NAME", it is a node, so the harness's tests run
// real node processes without building the coup command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "node" {
		os.Exit(nodeMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "hostile" {
		os.Exit(hostileMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "gset" {
		os.Exit(gsetMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "deferred" {
		os.Exit(deferredMain())
	}
	os.Exit(m.Run())
}

func nodeMain(args []string) int {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	algo := fs.String("algo", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	spec, ok := algorithms.Lookup(*algo)
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown algorithm %q\n", *algo)
		return 2
	}
	if err := process.Run(process.Options{In: os.Stdin, Out: os.Stdout, Log: os.Stderr, Spec: spec}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runScenario runs a scenario given as TOML with real node processes and
// returns its results and history. It fails the test if a node process
// outlives the run.
func runScenario(t *testing.T, src string) (*verdict.Results, *history.History) {
	t.Helper()
	res, h, _ := runScenarioDir(t, src)
	return res, h
}

// runScenarioDir is runScenario that also returns the run's store folder.
func runScenarioDir(t *testing.T, src string) (*verdict.Results, *history.History, string) {
	t.Helper()
	sc, err := scenario.Parse(t.Name()+".toml", src)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, dir, err := Run(ctx, sc, Options{Store: t.TempDir(), NodeCommand: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != "" {
		t.Fatalf("run failed: %s", res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	h = h.Expanded() // every event in Events, messages too
	if left := children(dir); len(left) > 0 {
		t.Errorf("node processes outlived the run: %v", left)
	}
	return res, h, dir
}

// children lists the live (not zombie) child processes of this one whose
// log (stderr) is in dir: the node processes of that run.
func children(dir string) []int {
	var out []int
	self := fmt.Sprint(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != self || f[0] == "Z" {
			continue
		}
		if log, err := os.Readlink(filepath.Join(d, "fd", "2")); err != nil || !strings.HasPrefix(log, dir) {
			continue
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		out = append(out, pid)
	}
	return out
}
