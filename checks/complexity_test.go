package checks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// ringElection is a Chang–Roberts election on the ring n1→n2→n3→n1 asked
// of n1 at 10ms, as events 4–17: election messages 1 and 2 climb to n3,
// which elects itself; elected messages 3 and 4 go round, and n2, the last
// to learn, passes the news on to n3 (message 5) at once. The live nodes
// agree on n3 from 19ms; message 5 arrives at 20ms.
func ringElection(b *hb) *hb {
	return b.elect("n1", 10). // 4
					msg(1, "n1", "n2", "election", 11). // 5 6
					msg(2, "n2", "n3", "election", 13). // 7 8
					leader("n3", "n3", 15).             // 9
					msg(3, "n3", "n1", "elected", 15).  // 10 11
					leader("n1", "n3", 17).             // 12
					msg(4, "n1", "n2", "elected", 17).  // 13 14
					leader("n2", "n3", 19).             // 15
					msg(5, "n2", "n3", "elected", 19)   // 16 17
}

func TestComplexity(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	base := func(bound int64) *hb { return hist(n3...).bound(bound).starts(0, n3...) }
	ring := func(bound int64) *hb { return ringElection(base(bound)) }
	perElection := func(want ...string) func(Result) any {
		return func(r Result) any {
			got, _ := r.Figures["per_election"].([]map[string]any)
			if len(got) != len(want) {
				return fmt.Sprintf("per_election: got %d elections, want %d", len(got), len(want))
			}
			for i, e := range got {
				s := fmt.Sprintf("%v %v-%v %v %v settled=%v", e["cause"], e["from_ns"], e["to_ns"], e["messages"], e["by_type"], e["settled"])
				if c, ok := e["cut_short_by"]; ok {
					s += fmt.Sprintf(" cut by %v", c)
				}
				if s != want[i] {
					return fmt.Sprintf("election %d: got %q, want %q", i+1, s, want[i])
				}
			}
			return nil
		}
	}
	// secondElection: n3 crashes at 100ms (event 18); n1 and n2 trade six
	// election messages (6–11) and settle on n2 at 131ms.
	secondElection := func(b *hb) *hb {
		b.crash("n3", 100)
		for i := int64(0); i < 6; i++ {
			src, dest := "n1", "n2"
			if i%2 == 1 {
				src, dest = dest, src
			}
			b.msg(6+i, src, dest, "election", 110+2*i)
		}
		return b.agree("n2", 131, "n1", "n2")
	}
	runCases(t, "complexity", []verdictCase{
		{
			name:    "one election within the bound",
			h:       ring(5).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"elections": 1, "max_messages": 5, "bound": 5, "source": "events"},
			absent:  []string{"outside_elections"},
			explain: []string{"the one election, election 1, from 0.010s (the elect request to n1) to 0.020s, cost 5 messages (elected 3, election 2), within the algorithm's bound of 5 per election"},
			check:   perElection("the elect request to n1 10000000-20000000 5 map[elected:3 election:2] settled=true"),
		},
		{
			name:     "one election over the bound",
			h:        ring(4).stops(200, n3...).end(200).h(),
			want:     False,
			interval: &Interval{From: ms(10), To: ms(20)},
			evidence: []int64{4, 16},
			figures:  map[string]any{"over_bound": 1},
			explain:  []string{"election 1, from 0.010s (the elect request to n1) to 0.020s, cost 5 messages (elected 3, election 2), more than the algorithm's bound of 4 per election; the message that went over the bound was elected n2→n3 at 0.019s"},
		},
		{
			name:    "no bound: figures only",
			h:       ring(0).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"max_messages": 5},
			absent:  []string{"bound"},
			explain: []string{"cost 5 messages (elected 3, election 2); the algorithm declares no message bound, so none is enforced"},
		},
		{
			name:    "a message long after the election is outside it",
			h:       ring(5).msg(6, "n1", "n2", "ping", 100).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"max_messages": 5, "outside_elections": 1, "outside_by_type": map[string]int64{"ping": 1}},
			explain: []string{"; 1 message was sent outside any election (ping 1)"},
		},
		{
			name: "a late answer is not the election's",
			h: base(4).elect("n1", 10).msg(1, "n1", "n2", "election", 11).msg(2, "n2", "n3", "election", 13).
				leader("n3", "n3", 15).msg(3, "n3", "n1", "elected", 15).leader("n1", "n3", 17).
				msg(4, "n1", "n2", "elected", 17).leader("n2", "n3", 19).
				msg(5, "n2", "n3", "elected", 40).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"max_messages": 4, "outside_elections": 1},
			check:   perElection("the elect request to n1 10000000-19000000 4 map[elected:2 election:2] settled=true"),
		},
		{
			name:    "messages before any trigger are outside every election",
			h:       ringElection(base(5).msg(9, "n2", "n3", "hello", 1)).stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"max_messages": 5, "outside_elections": 1},
		},
		{
			name:    "a second election after the leader crashes, both within the bound",
			h:       secondElection(ring(6)).stops(200, "n1", "n2").end(200).h(),
			want:    True,
			figures: map[string]any{"elections": 2, "max_messages": 6},
			explain: []string{"2 elections cost at most 6 messages each; the costliest, election 2, from 0.100s (the crash of n3) to 0.131s, cost 6 (election 6), within the algorithm's bound of 6 per election"},
			check: perElection("the elect request to n1 10000000-20000000 5 map[elected:3 election:2] settled=true",
				"the crash of n3 100000000-131000000 6 map[election:6] settled=true"),
		},
		{
			name:     "the second election goes over the bound",
			h:        secondElection(ring(5)).stops(200, "n1", "n2").end(200).h(),
			want:     False,
			interval: &Interval{From: ms(100), To: ms(131)},
			evidence: []int64{18, 29},
			explain:  []string{"election 2, from 0.100s (the crash of n3) to 0.131s, cost 6 messages (election 6), more than the algorithm's bound of 5 per election; the message that went over the bound was election n2→n1 at 0.120s"},
		},
		{
			name:    "both elections over the bound",
			h:       secondElection(ring(1)).stops(200, "n1", "n2").end(200).h(),
			want:    False,
			figures: map[string]any{"over_bound": 2},
			explain: []string{"election 1, from 0.010s", "; 2 of 2 elections went over the bound"},
		},
		{
			name: "elect requests to several initiators start one election",
			h: base(5).elect("n1", 10).elect("n2", 10).msg(1, "n1", "n2", "election", 11).msg(2, "n2", "n3", "election", 12).
				leader("n3", "n3", 13).msg(3, "n3", "n1", "elected", 13).agree("n3", 15, "n1", "n2").stops(200, n3...).end(200).h(),
			want:    True,
			figures: map[string]any{"elections": 1, "max_messages": 3},
			explain: []string{"from 0.010s (the elect request to n1 and the elect request to n2) to 0.015s"},
		},
		{
			name: "a crash before the election settles cuts it short",
			h: base(5).elect("n1", 10).msg(1, "n1", "n2", "election", 11).crash("n3", 13).
				msg(2, "n2", "n1", "election", 14).agree("n2", 16, "n1", "n2").stops(200, "n1", "n2").end(200).h(),
			want: True,
			check: perElection("the elect request to n1 10000000-13000000 1 map[election:1] settled=false cut by the crash of n3",
				"the crash of n3 13000000-16000000 1 map[election:1] settled=true"),
		},
		{
			name: "a restart under the same id begins an election",
			h: ring(5).crash("n1", 100).start("n1", 110).msg(6, "n3", "n1", "elected", 111).leader("n1", "n3", 113).
				stops(200, n3...).end(200).h(),
			want: True,
			check: perElection("the elect request to n1 10000000-20000000 5 map[elected:3 election:2] settled=true",
				"the crash of n1 100000000-113000000 1 map[elected:1] settled=true"),
		},
		{
			name:    "a fault that causes no message is no election",
			h:       ring(5).crash("n1", 100).stops(200, "n2", "n3").end(200).h(),
			want:    True,
			figures: map[string]any{"elections": 1},
		},
		{
			name: "an algorithm that starts by itself: the first start begins the election",
			h: hist(n3...).bound(5).starts(0, n3...).msg(1, "n1", "n2", "election", 1).msg(2, "n2", "n3", "election", 3).
				leader("n3", "n3", 5).msg(3, "n3", "n1", "elected", 5).agree("n3", 7, "n1", "n2").stops(200, n3...).end(200).h(),
			want:    True,
			explain: []string{"from 0.000s (the start of n1) to 0.007s, cost 3 messages"},
		},
		{
			name: "a duplicated message keeps the election open until its copy arrives",
			h: base(5).elect("n1", 10).send(1, "n1", "n3", "elected", 11).dup(1, 11).deliver(1, 12).
				agree("n3", 13, n3...).deliver(1, 40).stops(200, n3...).end(200).h(),
			want:  True,
			check: perElection("the elect request to n1 10000000-40000000 1 map[elected:1] settled=true"),
		},
		{
			name:    "an election still open at the end of the run",
			h:       base(5).elect("n1", 10).msg(1, "n1", "n2", "election", 11).stops(200, n3...).end(200).h(),
			want:    True,
			explain: []string{"to the end of the run at 0.200s, unsettled", "the last election had not settled when the run ended"},
		},
		{
			name: "messages not recorded: one election judged from the end event's counters",
			h: base(4).elect("n1", 10).agree("n3", 20, n3...).stops(200, n3...).
				endCounts(200, map[string]int64{"messages.sent": 5, "messages.sent.election": 3, "messages.sent.elected": 2}).h(),
			want:     False,
			evidence: []int64{4, 11},
			figures:  map[string]any{"source": "counts", "max_messages": 5},
			explain:  []string{"the run's one election cost 5 messages (elected 2, election 3; counted on the end event, as messages were not recorded one by one), more than the algorithm's bound of 4 per election"},
		},
		{
			name: "messages not recorded: within the bound",
			h: base(5).elect("n1", 10).agree("n3", 20, n3...).stops(200, n3...).
				endCounts(200, map[string]int64{"messages.sent": 5, "messages.sent.election": 3, "messages.sent.elected": 2}).h(),
			want: True,
		},
		{
			name: "messages not recorded, with a fault: unknown",
			h: base(5).elect("n1", 10).agree("n3", 20, n3...).crash("n3", 50).agree("n2", 70, "n1", "n2").stops(200, "n1", "n2").
				endCounts(200, map[string]int64{"messages.sent": 9}).h(),
			want:    Unknown,
			explain: []string{"set messages = true under [history]"},
		},
		{
			name: "messages not recorded, with a second elect request after the first settled: unknown",
			h: base(5).elect("n1", 10).agree("n3", 20, n3...).elect("n2", 50).stops(200, n3...).
				endCounts(200, map[string]int64{"messages.sent": 9}).h(),
			want: Unknown,
		},
		{
			name:    "messages not recorded and the run was killed: unknown",
			h:       base(5).elect("n1", 10).agree("n3", 20, n3...).h(),
			want:    Unknown,
			explain: []string{"has no end event"},
		},
		{
			name:    "no message at all",
			h:       base(5).elect("n1", 10).stops(200, n3...).endCounts(200, map[string]int64{"ops.invoke": 1}).h(),
			want:    True,
			explain: []string{"no message was sent"},
		},
	})
}

// A history that stopped recording messages at history.max_messages: a
// violation among the recorded messages stands, anything else is unknown.
func TestMessageLimit(t *testing.T) {
	n3 := []string{"n1", "n2", "n3"}
	limit := history.Event{Kind: history.KindLimit, What: history.LimitMessages, Node: "n2", Value: "9", Time: ms(30)}
	for _, tt := range []struct {
		name  string
		bound int64
		check string
		want  Validity
	}{
		{"within the bound, then not recorded", 20, "complexity", Unknown},
		{"over the bound before the limit", 3, "complexity", False},
		{"no corruption recorded, then not recorded", 0, "integrity", Unknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := ringElection(hist(n3...).bound(tt.bound).starts(0, n3...))
			b.add(limit)
			r := mustRun(t, tt.check, b.end(50).h())
			if r.Valid != tt.want {
				t.Fatalf("%s: %v, want %v: %s", tt.check, r.Valid, tt.want, r.Explanation)
			}
			if tt.want == Unknown && !strings.Contains(r.Explanation, "stopped recording messages") {
				t.Errorf("explanation: %s", r.Explanation)
			}
			// The same history without the limit event is judged on its own.
			if r := mustRun(t, tt.check, ringElection(hist(n3...).bound(tt.bound).starts(0, n3...)).end(50).h()); r.Valid == Unknown {
				t.Errorf("without the limit: unknown: %s", r.Explanation)
			}
		})
	}
}

func mustRun(t *testing.T, name string, h *history.History) Result {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("no check %s", name)
	}
	return c.Run(h)
}
