package catalogue

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/verdict"
)

// hostile is what a node might put in a report that a check explanation
// quotes: an escape sequence, line breaks, a NUL, an XML-invalid
// character, bytes that are not UTF-8, and markup.
const hostile = "\x1b[2K\r\nx: valid=true, as expected (exit 0)\n\x00\ufffe\xff</failure><![CDATA[&"

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func results(outcome string, code int, valid checks.Validity, notes ...string) *verdict.Results {
	return &verdict.Results{Scenario: "s", Valid: valid, Outcome: outcome, ExitCode: code, Notes: notes,
		Checks: map[string]checks.Result{}, Complete: code != verdict.ExitUnknown}
}

// sample is a catalogue of one run of each kind.
func sample() *Catalogue {
	plan := []Run{
		Planned("chang-roberts", "scenarios/chang-roberts.toml", 1, 1),
		Planned("bully-coordinator-paused", "scenarios/bully-coordinator-paused.toml", 1, 1),
		Planned("omega", "scenarios/omega.toml", 1, 1),
		Planned("foreign", "scenarios/foreign.toml", 1, 1),
		Planned("race", "scenarios/sim/race.toml", 1, 2),
		Planned("race", "scenarios/sim/race.toml", 2, 2),
	}
	c := New(t0, plan)
	c.Record(0, plan[0].Finish(results(verdict.AsExpected, 0, checks.True), "store/chang-roberts/1", t0, 1500*time.Millisecond, nil), t0)
	c.Record(1, plan[1].Finish(results(verdict.Unexpected, 1, checks.False,
		"two-leaders: unexpected violation: n4 and n5 both led "+hostile), "store/bully/1", t0, 2*time.Second, nil), t0)
	interrupted := results(verdict.Unknown, 3, checks.True, "the history has no end event: the run did not finish")
	interrupted.Error = "interrupted"
	c.Record(2, plan[2].Finish(interrupted, "store/omega/1", t0, 250*time.Millisecond, nil), t0)
	failed := results(verdict.Unknown, 2, checks.Unknown)
	failed.Error = "a node failed to start: n1: exec: \"./mynode\": not found"
	c.Record(3, plan[3].Finish(failed, "store/foreign/1", t0, 10*time.Millisecond, nil), t0)
	c.Record(4, plan[4].Finish(nil, "", t0, time.Millisecond, errors.New("create store: permission denied")), t0)
	c.Stop(true, t0.Add(5*time.Second))
	return c
}

// The common JUnit schema, as CI systems read it.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     float64  `xml:"time,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name      string  `xml:"name,attr"`
	Tests     int     `xml:"tests,attr"`
	Failures  int     `xml:"failures,attr"`
	Errors    int     `xml:"errors,attr"`
	Skipped   int     `xml:"skipped,attr"`
	Time      float64 `xml:"time,attr"`
	Timestamp string  `xml:"timestamp,attr"`
	Cases     []xCase `xml:"testcase"`
}

type xCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      float64   `xml:"time,attr"`
	Failure   *xProblem `xml:"failure"`
	Error     *xProblem `xml:"error"`
	Skipped   *xProblem `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
}

type xProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	raw := b.String()
	for i, c := range raw {
		if (c < 0x20 && c != '\n') || c == 0x7f || c == 0xFFFE || c == 0xFFFD {
			t.Fatalf("character %U at byte %d: not what a strict XML reader takes", c, i)
		}
	}
	var doc xSuites
	dec := xml.NewDecoder(strings.NewReader(raw))
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, raw)
	}
	if doc.Tests != 6 || doc.Failures != 1 || doc.Errors != 3 || doc.Skipped != 1 {
		t.Errorf("tests %d failures %d errors %d skipped %d, want 6, 1, 3, 1", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "scenarios" || doc.Suites[1].Name != "scenarios/sim" {
		t.Fatalf("suites %+v, want scenarios and scenarios/sim", doc.Suites)
	}
	s := doc.Suites[0]
	if s.Tests != 4 || s.Failures != 1 || s.Errors != 2 || s.Timestamp != "2025-03-04T05:06:07" || s.Time < 3.75 || s.Time > 3.77 {
		t.Errorf("first suite %+v", s)
	}
	pass, fail, unknown, nodes := s.Cases[0], s.Cases[1], s.Cases[2], s.Cases[3]
	if pass.Name != "chang-roberts" || pass.Classname != "scenarios" || pass.Time != 1.5 || pass.Failure != nil || pass.Error != nil {
		t.Errorf("passing case %+v", pass)
	}
	if !strings.Contains(pass.SystemOut, "store: store/chang-roberts/1") {
		t.Errorf("system-out %q lacks the store", pass.SystemOut)
	}
	if fail.Failure == nil || fail.Failure.Type != "unexpected" || !strings.HasPrefix(fail.Failure.Message, "two-leaders: unexpected violation: n4 and n5 both led ") {
		t.Fatalf("failing case %+v", fail)
	}
	if want := `\x1b[2K\r\nx: valid=true, as expected (exit 0)\n\x00\ufffe\xff</failure><![CDATA[&`; !strings.HasSuffix(fail.Failure.Message, want) {
		t.Errorf("message %q does not end with the escaped hostile text %q", fail.Failure.Message, want)
	}
	if !strings.Contains(fail.Failure.Text, "store: store/bully/1") {
		t.Errorf("failure text %q lacks the store", fail.Failure.Text)
	}
	if unknown.Error == nil || unknown.Error.Type != "unknown" || !strings.Contains(unknown.Error.Message, "no end event") {
		t.Errorf("unknown case %+v", unknown)
	}
	if nodes.Error == nil || nodes.Error.Type != "node-start" || !strings.HasPrefix(nodes.Error.Message, "a node failed to start") {
		t.Errorf("node-start case %+v", nodes)
	}
	sim := doc.Suites[1]
	if len(sim.Cases) != 2 || sim.Cases[0].Name != "race (run 1 of 2)" || sim.Cases[0].Error == nil ||
		!strings.Contains(sim.Cases[0].Error.Message, "permission denied") || sim.Cases[1].Skipped == nil {
		t.Errorf("repeated runs %+v", sim.Cases)
	}
}

// A real consumer of JUnit files reads the file as this package means it:
// junitparser (Debian's python3-junitparser), when it is installed.
func TestJUnitReadByJunitparser(t *testing.T) {
	python := needs.Python(t, "junitparser", "python3-junitparser")
	file := filepath.Join(t.TempDir(), "junit.xml")
	if err := sample().WriteJUnitFile(file); err != nil {
		t.Fatal(err)
	}
	const script = `
import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
out = []
for suite in xml:
    for case in suite:
        kinds = [type(r).__name__ for r in case.result]
        msgs = [r.message for r in case.result]
        out.append({"suite": suite.name, "name": case.name, "classname": case.classname, "time": case.time, "kinds": kinds, "messages": msgs, "out": case.system_out})
print(json.dumps(out))
`
	got, err := exec.Command(python, "-c", script, file).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("junitparser: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var cases []struct {
		Suite, Name, Classname string
		Time                   float64
		Kinds, Messages        []string
		Out                    string
	}
	if err := json.Unmarshal(got, &cases); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	want := []struct{ name, kind string }{
		{"chang-roberts", ""}, {"bully-coordinator-paused", "Failure"}, {"omega", "Error"},
		{"foreign", "Error"}, {"race (run 1 of 2)", "Error"}, {"race (run 2 of 2)", "Skipped"},
	}
	if len(cases) != len(want) {
		t.Fatalf("junitparser read %d cases, want %d: %s", len(cases), len(want), got)
	}
	for i, w := range want {
		c := cases[i]
		kind := strings.Join(c.Kinds, ",")
		if c.Name != w.name || kind != w.kind {
			t.Errorf("case %d: %s (%s), want %s (%s)", i, c.Name, kind, w.name, w.kind)
		}
	}
	if c := cases[1]; c.Classname != "scenarios" || c.Time != 2 || !strings.HasPrefix(c.Messages[0], "two-leaders: unexpected violation") {
		t.Errorf("failing case as junitparser reads it: %+v", c)
	}
	if !strings.Contains(cases[0].Out, "store: store/chang-roberts/1") {
		t.Errorf("system-out as junitparser reads it: %q", cases[0].Out)
	}
}

func TestSummaryFile(t *testing.T) {
	store := t.TempDir()
	c := sample()
	if err := c.WriteSummary(store); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(store, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema      int            `json:"schema"`
		Finished    bool           `json:"finished"`
		Interrupted bool           `json:"interrupted"`
		ExitCode    int            `json:"exit_code"`
		Duration    int64          `json:"duration_ns"`
		Totals      map[string]int `json:"totals"`
		Runs        []struct {
			Scenario, File, Outcome, Store string
			Valid                          any
			ExitCode                       int   `json:"exit_code"`
			Duration                       int64 `json:"duration_ns"`
			Notes                          []string
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != 1 || !s.Finished || !s.Interrupted || s.ExitCode != 2 || s.Duration != int64(5*time.Second) {
		t.Errorf("summary %+v", s)
	}
	want := map[string]int{"runs": 6, "as_expected": 1, "unexpected": 1, "unknown": 2, "failed_to_start": 1, "not_run": 1}
	for k, v := range want {
		if s.Totals[k] != v {
			t.Errorf("totals[%s] = %d, want %d (%v)", k, s.Totals[k], v, s.Totals)
		}
	}
	r := s.Runs[1]
	if r.Scenario != "bully-coordinator-paused" || r.File != "scenarios/bully-coordinator-paused.toml" || r.Outcome != "unexpected" ||
		r.Valid != false || r.ExitCode != 1 || r.Duration != int64(2*time.Second) || r.Store != "store/bully/1" {
		t.Errorf("run %+v", r)
	}
	if strings.ContainsAny(r.Notes[0], "\x1b\r\n\x00") {
		t.Errorf("note %q keeps control characters", r.Notes[0])
	}
	if s.Runs[5].Outcome != "not run" || s.Runs[5].Valid != nil {
		t.Errorf("the run never started: %+v", s.Runs[5])
	}
	// Nothing is left beside it.
	left, _ := filepath.Glob(filepath.Join(store, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWorst(t *testing.T) {
	tests := []struct{ a, b, want int }{
		{0, 0, 0}, {0, 3, 3}, {3, 1, 1}, {1, 3, 1}, {1, 2, 2}, {2, 0, 2}, {3, 0, 3},
	}
	for _, tt := range tests {
		if got := Worst(tt.a, tt.b); got != tt.want {
			t.Errorf("Worst(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	// While runs are still to come, the code is what stopping now would give.
	c := New(t0, []Run{Planned("a", "a.toml", 1, 1)})
	if c.ExitCode != 3 || c.Totals.NotRun != 1 {
		t.Errorf("a catalogue with nothing run: exit %d, %+v", c.ExitCode, c.Totals)
	}
}
