package coup

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The environment variables a test run of Test reads, so that a failing
// seed is replayed, swept further or shrunk with the test's own command.
const (
	envSeed   = "COUP_SEED"   // run this one seed (and save it)
	envSeeds  = "COUP_SEEDS"  // sweep this many seeds
	envShrink = "COUP_SHRINK" // "1": shrink the first seed not as expected
	envStore  = "COUP_STORE"  // the store's root
)

// Test is Run from a test: it runs the scenario's seeds with node's
// machine and fails t when a seed's outcome is not the one the scenario
// expects, with that seed's verdict, its store folder and the command that
// replays it (the test's own go test command with COUP_SEED set). The
// environment overrides opts: COUP_SEED=S runs seed S alone, COUP_SEEDS=N
// sweeps N seeds, COUP_SHRINK=1 shrinks the first seed not as expected,
// COUP_STORE=DIR moves the store. A scenario or node that cannot run is a
// fatal error of the test.
func Test(t testing.TB, sc *Scenario, node Node, opts Options) *Result {
	t.Helper()
	if err := fromEnv(&opts); err != nil {
		t.Fatalf("coup: %v", err)
	}
	res, err := Run(sc, node, opts)
	if res == nil {
		t.Fatalf("coup: %v", err)
	}
	replay := replayCommand(t.Name())
	name := res.Scenario.Name
	if res.Seeds > 1 {
		t.Logf("coup: %s: %d seeds from %d in %s, %d not as expected", name, res.Seeds, res.From, res.Wall.Round(time.Millisecond), len(res.Failing))
	}
	if s := res.Saved; s != nil {
		var b strings.Builder
		switch {
		case res.Seeds == 1 && s.AsExpected:
			fmt.Fprintf(&b, "coup: %s, seed %d: valid=%s, as expected\n", name, s.Seed, s.Valid)
		case res.Seeds == 1:
			fmt.Fprintf(&b, "coup: %s, seed %d: valid=%s, not as expected\n", name, s.Seed, s.Valid)
		default:
			fmt.Fprintf(&b, "coup: %s, seed %d: valid=%s, not as expected (%d of %d seeds from %d: %s)\n",
				name, s.Seed, s.Valid, len(res.Failing), res.Seeds, res.From, seedList(res.Failing))
		}
		b.WriteString(s.Summary)
		if s.Signature != "" {
			fmt.Fprintf(&b, "  signature: %s\n", s.Signature)
		}
		fmt.Fprintf(&b, "  store: %s (report.html, history.jsonl, results.json)\n", s.Dir)
		fmt.Fprintf(&b, "  history sha256 %s\n", short(s.Hash))
		fmt.Fprintf(&b, "  replay: %s=%d %s", envSeed, s.Seed, replay)
		if sh := res.Shrunk; sh != nil {
			fmt.Fprintf(&b, "\n  shrunk in %d simulations to %s (seed %d): %d→%d nodes, %d→%d faults, %d→%d messages",
				sh.Sims, sh.File, sh.Seed, sh.Before.Nodes, sh.After.Nodes, sh.Before.Faults, sh.After.Faults, sh.Before.Messages, sh.After.Messages)
		} else if !s.AsExpected {
			fmt.Fprintf(&b, "\n  shrink: %s=%d %s=1 %s", envSeed, s.Seed, envShrink, replay)
		}
		if s.AsExpected {
			t.Log(b.String())
		} else {
			t.Error(b.String())
		}
	}
	if err != nil {
		t.Errorf("coup: %v", err)
	}
	return res
}

// fromEnv applies the environment's overrides to opts.
func fromEnv(opts *Options) error {
	if v := os.Getenv(envSeed); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%q: want an integer seed", envSeed, v)
		}
		opts.Seed, opts.Seeds = seed, 1
	}
	if v := os.Getenv(envSeeds); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a number of seeds, at least 1", envSeeds, v)
		}
		opts.Seeds = n
	}
	switch v := os.Getenv(envShrink); v {
	case "":
	case "1", "true":
		opts.Shrink = true
	case "0", "false":
		opts.Shrink = false
	default:
		return fmt.Errorf("%s=%q: want 1 or 0", envShrink, v)
	}
	if v := os.Getenv(envStore); v != "" {
		opts.Store = v
	}
	return nil
}

// replayCommand is the go test command that runs the test named name
// again, from the root of the module the test's package is in.
func replayCommand(name string) string {
	var run []string
	for _, part := range strings.Split(name, "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	return fmt.Sprintf("go test -run %s %s", shellQuote(strings.Join(run, "/")), shellQuote(packageDir()))
}

// packageDir is the test's package as go test names it from the module's
// root ("./raftkv", or "." for the root), or its absolute folder when no
// go.mod is found above it.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return wd
			}
			if rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// shellQuote quotes a word for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!^") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// seedList writes seeds as "1, 2, 5", cut after ten.
func seedList(seeds []int64) string {
	const most = 10
	var b strings.Builder
	for i, s := range seeds {
		if i == most {
			fmt.Fprintf(&b, ", … (%d more)", len(seeds)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(s, 10))
	}
	return b.String()
}

// short is how a history hash is printed: its first 16 hex digits.
func short(hash string) string { return hash[:min(len(hash), 16)] }
