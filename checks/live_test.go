package checks

import (
	"slices"
	"testing"
)

func TestWorldAt(t *testing.T) {
	h := hist("n1", "n2", "n3").
		starts(0, "n1", "n2").                // 1 2
		leader("n1", "n2", 10).               // 3
		leader("n2", "n2", 10).               // 4
		pause("n2", 20).                      // 5
		leader("n3", "n3", 25).               // 6: n3 never started: ignored
		crash("n1", 30).                      // 7
		leader("n1", "n1", 31).               // 8: n1 is down: ignored
		start("n1", 40).                      // 9: fresh state
		resume("n2", 50).                     // 10
		start("x", 60).leader("x", "n2", 60). // 11 12: a node the meta event does not name
		stop("n2", 70).                       // 13
		end(80).h()
	type state struct {
		live   bool
		paused bool
		leader string
	}
	tests := []struct {
		at   int64
		want map[string]state
		live []string
	}{
		{0, map[string]state{"n1": {live: true}, "n2": {live: true}, "n3": {}}, []string{"n1", "n2"}},
		{10, map[string]state{"n1": {true, false, "n2"}, "n2": {true, false, "n2"}}, []string{"n1", "n2"}},
		{25, map[string]state{"n2": {true, true, "n2"}, "n3": {}}, []string{"n1", "n2"}},
		{31, map[string]state{"n1": {}, "n2": {true, true, "n2"}}, []string{"n2"}},
		{40, map[string]state{"n1": {live: true}}, []string{"n1", "n2"}},
		{50, map[string]state{"n2": {true, false, "n2"}}, []string{"n1", "n2"}},
		{60, map[string]state{"x": {true, false, "n2"}}, []string{"n1", "n2", "x"}},
		{70, map[string]state{"n2": {}}, []string{"n1", "x"}},
	}
	for _, tt := range tests {
		w := worldAt(h, ms(tt.at))
		for name, want := range tt.want {
			n := w.nodes[name]
			got := state{n.live, n.pause != nil, n.leader}
			if got != want {
				t.Errorf("at %dms, %s: got %+v, want %+v", tt.at, name, got, want)
			}
		}
		if got := w.live(); !slices.Equal(got, tt.live) {
			t.Errorf("at %dms, live: got %v, want %v", tt.at, got, tt.live)
		}
	}
	if got, want := worldAt(h, ms(80)).ignored, 2; got != want {
		t.Errorf("ignored reports: got %d, want %d", got, want)
	}
	w := worldAt(h, ms(45))
	if n := w.nodes["n1"]; n.start.Index != 9 || n.down != nil || n.report != nil {
		t.Errorf("restarted n1: got start %d, down %v, report %v; want start 9 and nothing else", n.start.Index, n.down, n.report)
	}
	w = worldAt(h, ms(35))
	if n := w.nodes["n1"]; n.start.Index != 1 || n.down == nil || n.down.Index != 7 {
		t.Errorf("crashed n1: got start %v, down %v; want start 1, down 7", n.start, n.down)
	}
}
