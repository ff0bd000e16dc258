package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

func TestBuildTimeline(t *testing.T) {
	h := hist("n1", "n2").starts(0, "n1", "n2").leader("n1", "n2", 10).leader("n2", "n2", 10).
		nemesis("pause", history.PhaseStart, 20, "n2").pause("n2", 20).leader("n1", "", 30).
		nemesis("pause", history.PhaseEnd, 40, "n2").resume("n2", 40).
		nemesis("partition", history.PhaseStart, 45, "n1").
		crash("n1", 50).start("n1", 60).leader("n1", "n2", 70).leader("n1", "n2", 75).
		stop("n1", 90).stop("n2", 90).end(100).h()
	tl := BuildTimeline(h)
	var got []string
	for _, l := range tl.Nodes {
		var spans, marks []string
		for _, s := range l.Spans {
			spans = append(spans, fmt.Sprintf("%d-%d:%s%s", s.From/1e6, s.To/1e6, s.Leader, map[bool]string{true: "(paused)"}[s.Paused]))
		}
		for _, m := range l.Marks {
			marks = append(marks, fmt.Sprintf("%s@%d%s", m.What, m.Time/1e6, map[bool]string{true: "!"}[m.Restart]))
		}
		got = append(got, l.Name+" "+strings.Join(spans, " ")+" | "+strings.Join(marks, " "))
	}
	for _, f := range tl.Faults {
		to := fmt.Sprint(f.To / 1e6)
		if f.To < 0 {
			to = "open"
		}
		got = append(got, fmt.Sprintf("%s %v %d-%s", f.What, f.Nodes, f.From/1e6, to))
	}
	got = append(got, fmt.Sprintf("run end %d, end %d", tl.RunEnd/1e6, tl.End/1e6))
	want := []string{
		"n1 0-10: 10-30:n2 30-50: 60-70: 70-90:n2 | start@0 crash@50 start@60! stop@90",
		"n2 0-10: 10-20:n2 20-40:n2(paused) 40-90:n2 | start@0 pause@20 resume@40 stop@90",
		"pause [n2] 20-40",
		"partition [n1] 45-open",
		"run end 90, end 100",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTimelineUnknownBelief holds that a belief that is not known is a
// span of its own, marked unknown, and that each span carries the
// evidence of the report that set it.
func TestTimelineUnknownBelief(t *testing.T) {
	h, err := history.ReadFile("testdata/fixtures/etcd-two-leaders-evidence.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n1 := BuildTimeline(h).Nodes[0]
	var got []string
	for _, s := range n1.Spans {
		from := ""
		if len(s.Evidence) > 0 {
			from = s.Evidence[0].From
		}
		got = append(got, fmt.Sprintf("%s leader=%q unknown=%v %s", fmtTime(s.From), s.Leader, s.Unknown, from))
	}
	want := []string{
		`0.000s leader="" unknown=false `,
		`1.204s leader="n1" unknown=false n1.etcd.log`,
		`4.700s leader="" unknown=true http://10.77.0.1:2379/v3/maintenance/status`,
		`6.231s leader="n2" unknown=false n1.etcd.log`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("n1's spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
