package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
)

// One clock: the time the console prints for a nemesis event is the time
// history.jsonl records for it (to the console's millisecond), harness.log
// gives the same to the microsecond, and results.json's explanations and
// report.html's fault bands, where they name the event, give it too; the
// same for every driver. A crash and a restart fired by a trigger (the
// restart returns only once the node is up, after its event) on the pipe
// driver and on the simulator, and a pause of a real etcd member.
func TestOneClock(t *testing.T) {
	replaced := scenarioPath(t, "bully-coordinator-replaced.toml")
	t.Run("pipe", func(t *testing.T) {
		run := coup(t, "run", replaced)
		if run.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
		}
		checkOneClock(t, run, "bully-coordinator-replaced", true, true)
	})
	t.Run("sim", func(t *testing.T) {
		run := coup(t, "sim", replaced)
		if run.code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", run.code, run.stdout, run.stderr)
		}
		// coup sim prints no progress lines: it runs faster than they
		// could be read.
		checkOneClock(t, run, "bully-coordinator-replaced", false, true)
	})
	t.Run("servers", func(t *testing.T) {
		needs(t, "etcd")
		file := serverScenario(t, "etcd", "[[faults]]\nkind = \"pause\"\ntarget = \"n1\"\nat = \"300ms\"\nfor = \"300ms\"\n")
		run := coup(t, "run", file)
		// The verdict depends on how soon etcd elects on a loaded machine;
		// the times do not.
		if run.code != 0 && run.code != 1 && run.code != 3 {
			t.Fatalf("exit %d, want a verdict\n%s%s", run.code, run.stdout, run.stderr)
		}
		checkOneClock(t, run, "etcd", true, false)
	})
}

var (
	consoleNemesis = regexp.MustCompile(`(?m)^  \[ *([0-9.]+)s\] nemesis: (\S+) (\S+) (start|end) `)
	logNemesis     = regexp.MustCompile(`(?m)^ *([0-9.]+)s nemesis: (\S+) (\S+) (start|end) `)
	explainedAt    = regexp.MustCompile(`nemesis event \((\S+) (start|end)\) at ([0-9.]+s)`)
)

// checkOneClock compares the times a run's console (when console), its
// harness.log, results.json and report.html give each nemesis event with
// the history's. explained says that results.json must name one (the
// termination check's last nemesis event).
func checkOneClock(t *testing.T, run coupRun, name string, console, explained bool) {
	t.Helper()
	dir := filepath.Join(run.store, name, "latest")
	h, err := history.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]int64{} // "name what phase" -> its time
	for e := range h.All() {
		if e.Kind == history.KindNemesis {
			recorded[e.Name+" "+e.What+" "+e.Phase] = e.Time
		}
	}
	if len(recorded) == 0 {
		t.Fatalf("no nemesis event in the history:\n%s", run.stdout)
	}
	millis := func(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e9) }
	micros := func(ns int64) string { return fmt.Sprintf("%.6f", float64(ns)/1e9) }

	// compare finds each recorded event in text, once, at its time.
	compare := func(where, text string, re *regexp.Regexp, format func(int64) string) {
		seen := map[string]bool{}
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			key := m[2] + " " + m[3] + " " + m[4]
			at, ok := recorded[key]
			switch {
			case !ok:
				t.Errorf("%s shows %s, which the history does not record", where, key)
			case m[1] != format(at):
				t.Errorf("%s shows %s at %ss, the history at %ss", where, key, m[1], format(at))
			}
			seen[key] = true
		}
		for key := range recorded {
			if !seen[key] {
				t.Errorf("%s does not show %s (the history's at %ss):\n%s", where, key, format(recorded[key]), text)
			}
		}
	}
	if console {
		compare("the console", run.stdout, consoleNemesis, millis)
		if !strings.Contains(run.stdout, "  [ start ] starting ") || !regexp.MustCompile(`\] nodes up after \S+; running for`).MatchString(run.stdout) {
			t.Errorf("the console does not mark the start before the run's zero, or lacks how long it took:\n%s", run.stdout)
		}
	}
	compare("harness.log", readFile(t, filepath.Join(dir, lifecycle.HarnessLog)), logNemesis, micros)

	var res struct {
		Checks map[string]struct {
			Explanation string `json:"explanation"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, lifecycle.ResultsFile))), &res); err != nil {
		t.Fatal(err)
	}
	named := 0
	for check, c := range res.Checks {
		for _, m := range explainedAt.FindAllStringSubmatch(c.Explanation, -1) {
			named++
			// The explanation names the event by what, not by name: any
			// recorded event of that what and phase at that time will do.
			found := false
			for key, at := range recorded {
				if strings.HasSuffix(key, " "+m[1]+" "+m[2]) && millis(at)+"s" == m[3] {
					found = true
				}
			}
			if !found {
				t.Errorf("results.json: %s says the %s %s was at %s; the history has %v", check, m[1], m[2], m[3], recorded)
			}
		}
	}
	if explained && named == 0 {
		t.Errorf("results.json names no nemesis event's time: %+v", res.Checks)
	}

	page := readFile(t, filepath.Join(dir, lifecycle.ReportFile))
	for key, at := range recorded {
		what, phase := strings.Fields(key)[1], strings.Fields(key)[2]
		word := "at|from"
		if phase == history.PhaseEnd {
			word = "to"
		}
		band := regexp.MustCompile(`<title>nemesis: ` + regexp.QuoteMeta(what) + `[^<]* (` + word + `) ` + regexp.QuoteMeta(millis(at)) + `s`)
		if !band.MatchString(page) {
			t.Errorf("report.html has no fault band for %s at %ss", key, millis(at))
		}
	}
}
