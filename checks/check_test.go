package checks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestRegistry(t *testing.T) {
	var names []string
	for _, c := range All() {
		names = append(names, c.Name)
		if c.Doc == "" || c.Run == nil {
			t.Errorf("check %q: Doc and Run must be set", c.Name)
		}
	}
	if want := []string{"two-leaders", "agreement", "validity", "termination"}; len(names) < len(want) || !slices.Equal(names[:len(want)], want) {
		t.Errorf("All: got %v, want it to begin with %v", names, want)
	}
	for _, name := range append(Defaults("election"), Defaults("mutex")...) {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q) of a default: not found", name)
		}
	}
	if got := Defaults("mutex"); !slices.Equal(got, MutexDefaults) {
		t.Errorf("Defaults(mutex) = %v, want %v", got, MutexDefaults)
	}
	if _, ok := Lookup("nope"); ok {
		t.Errorf("Lookup(nope): found")
	}
	// All returns a copy: changing it does not change the registry.
	All()[0].Name = "changed"
	if All()[0].Name != "two-leaders" {
		t.Errorf("All shares its slice with the registry")
	}
}

func TestRun(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	good := hist(n3...).starts(0, n3...).agree("n3", 10, n3...).end(2000).h()
	split := hist(n3...).starts(0, n3...).leader("n1", "n1", 10).agree("n3", 10, "n2", "n3").end(2000).h()
	short := hist(n3...).starts(0, n3...).agree("n3", 10, n3...).end(20).h()
	tests := []struct {
		name  string
		h     *history.History
		names []string
		want  Validity
		each  []Validity
	}{
		{"all valid", good, ElectionDefaults, True, []Validity{True, True, True, True}},
		{"two leaders", split, ElectionDefaults, False, []Validity{False, False, False, True}},
		{"too short", short, ElectionDefaults, Unknown, []Validity{True, True, True, Unknown}},
		{"order as asked", split, []string{"termination", "two-leaders"}, False, []Validity{True, False}},
		{"nothing asked", split, nil, True, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, v, err := Run(tt.h, tt.names)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if v != tt.want {
				t.Errorf("verdict: got %v, want %v", v, tt.want)
			}
			var each []Validity
			for i, r := range rs {
				each = append(each, r.Valid)
				if r.Name != tt.names[i] {
					t.Errorf("result %d: got name %q, want %q", i, r.Name, tt.names[i])
				}
			}
			if !slices.Equal(each, tt.each) {
				t.Errorf("verdicts: got %v, want %v", each, tt.each)
			}
		})
	}
}

func TestRunUnknownName(t *testing.T) {
	h := hist("n1").start("n1", 0).end(10).h()
	_, _, err := Run(h, []string{"two-leaders", "tow-leaders"})
	if err == nil || !strings.Contains(err.Error(), `"tow-leaders"`) {
		t.Errorf("Run with a misspelt name: got %v, want an error naming it", err)
	}
}

// A killed run leaves a half-written last line: it is skipped, and every
// check still judges the rest and says what it skipped.
func TestTruncatedLastLine(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	good := hist(n3...).starts(0, n3...).leader("n1", "n1", 10).leader("n2", "n2", 20).leader("n3", "n1", 25).jsonl()
	text := good + `{"i":7,"t":30000000,"kind":"report","node":"n1","what":"lea`
	h, err := history.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := len(h.Bad), 1; got != want {
		t.Fatalf("bad lines: got %d, want %d", got, want)
	}
	rs, v, err := Run(h, ElectionDefaults)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if v != False {
		t.Errorf("verdict: got %v, want false", v)
	}
	want := map[string]Validity{"two-leaders": False, "agreement": False, "validity": False, "termination": Unknown}
	for _, r := range rs {
		if r.Valid != want[r.Name] {
			t.Errorf("%s: got %v (%s), want %v", r.Name, r.Valid, r.Explanation, want[r.Name])
		}
		if got := r.Figures["skipped_lines"]; got != 1 {
			t.Errorf("%s: skipped_lines: got %v, want 1", r.Name, got)
		}
		if !strings.Contains(r.Explanation, "; 1 line of the history could not be parsed and was skipped (line 8)") {
			t.Errorf("%s: explanation %q does not mention the skipped line", r.Name, r.Explanation)
		}
	}
}

func TestTimeRunsBackwards(t *testing.T) {
	events := hist("n1").start("n1", 10).leader("n1", "n1", 20).end(30).list()
	events[2].Time = ms(5)
	h, err := history.FromEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range All() {
		r := judge(t, c.Name, h)
		if r.Valid != Unknown || !strings.Contains(r.Explanation, "runs backwards at event 2") {
			t.Errorf("%s: got %v (%s), want unknown because time runs backwards", c.Name, r.Valid, r.Explanation)
		}
	}
}

func TestResultJSON(t *testing.T) {
	r := Result{
		Name:        "two-leaders",
		Valid:       False,
		Explanation: "n1 and n2 both believed they were the leader",
		Nodes:       []string{"n1", "n2"},
		Interval:    &Interval{From: 1, To: 2},
		Evidence:    []history.Event{{Index: 3, Time: 1, Kind: history.KindReport, Node: "n1", What: "leader", Value: "n1"}},
		Figures:     map[string]any{"overlaps": 1},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"two-leaders","valid":false,"explanation":"n1 and n2 both believed they were the leader","nodes":["n1","n2"],"interval":{"from":1,"to":2},"evidence":[{"i":3,"t":1,"kind":"report","node":"n1","what":"leader","value":"n1"}],"figures":{"overlaps":1}}`
	if string(b) != want {
		t.Errorf("Marshal:\ngot  %s\nwant %s", b, want)
	}
	b, err = json.Marshal(Result{Name: "termination", Valid: Unknown})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"name":"termination","valid":"unknown"}`; got != want {
		t.Errorf("Marshal of an empty result: got %s, want %s", got, want)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{fmtTime(1_203_000_000), "1.203s"},
		{fmtTime(0), "0.000s"},
		{fmtDur(47_000_000), "47ms"},
		{fmtDur(47_400_000), "47ms"},
		{fmtDur(1_500_000_000), "1.5s"},
		{fmtDur(300), "300ns"},
		{joinNames([]string{"n1"}), "n1"},
		{joinNames([]string{"n1", "n2"}), "n1 and n2"},
		{joinNames([]string{"n1", "n2", "n3"}), "n1, n2 and n3"},
		{joinNames([]string{"a", "b", "c", "d", "e", "f", "g", "h"}), "a, b, c, d, e and 3 others"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestNoProcessStarts(t *testing.T) {
	h := hist("n1", "n2").leader("n1", "n1", 10).leader("n2", "n2", 20).end(2000).h()
	for _, c := range All() {
		r := judge(t, c.Name, h)
		if r.Valid != Unknown || !strings.Contains(r.Explanation, "no process start event") {
			t.Errorf("%s: got %v (%s), want unknown for want of process events", c.Name, r.Valid, r.Explanation)
		}
	}
	// Without leader reports there is nothing to judge: no node started and
	// none claimed anything.
	empty := hist("n1").end(2000).h()
	for _, name := range ElectionDefaults {
		if r := judge(t, name, empty); r.Valid != True {
			t.Errorf("%s on an empty history: got %v (%s), want true", name, r.Valid, r.Explanation)
		}
	}
}

func TestSeveralBadLines(t *testing.T) {
	lines := strings.SplitAfter(hist("n1").start("n1", 0).leader("n1", "n1", 10).end(2000).jsonl(), "\n")
	text := lines[0] + "{oops\n" + lines[1] + lines[2] + "not json either\n" + lines[3]
	h, err := history.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for _, c := range All() {
		r := judge(t, c.Name, h)
		if slices.Contains(ElectionDefaults, c.Name) && r.Valid != True {
			t.Errorf("%s: got %v (%s), want true", c.Name, r.Valid, r.Explanation)
		}
		if want := "; 2 lines of the history could not be parsed and were skipped (the first at line 2)"; !strings.HasSuffix(r.Explanation, want) {
			t.Errorf("%s: explanation %q: want it to end with %q", c.Name, r.Explanation, want)
		}
	}
}
