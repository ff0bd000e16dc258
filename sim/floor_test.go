package sim

import "testing"

// The bare loop replays a captured run faithfully: the same machines, fed
// the same inputs with the same random sources and ids, send exactly the
// messages they sent in the simulation. A replay that drifted (another
// seed, other ids, an input missed) sends another number, over the
// catalogue if not in every scenario.
func TestFloorReplaysTheSameRun(t *testing.T) {
	runs := 0
	for _, sc := range catalogue(t) {
		cfg, err := FromScenario(sc, sc.Seed)
		if err != nil {
			continue // not simulable here
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(); err != nil {
			t.Fatal(err)
		}
		want := s.Stats()
		inputs, fl, err := captureRun(sc, sc.Seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		delivered := 0
		for _, in := range inputs {
			if in.kind == inReceive {
				delivered++
			}
		}
		if err := fl.prepare(inputs); err != nil {
			t.Fatal(err)
		}
		fl.replay(inputs)
		if fl.sends != want.Sent {
			t.Errorf("%s: the replay's machines sent %d messages, the simulation's %d", sc.Name, fl.sends, want.Sent)
		}
		// A copy rejected as corrupt reaches no machine.
		if int64(delivered) > want.Delivered {
			t.Errorf("%s: %d deliveries replayed, more than the simulation's %d", sc.Name, delivered, want.Delivered)
		}
		fl.sends = 0
		if err := fl.prepare(inputs); err != nil {
			t.Fatal(err)
		}
		fl.replay(inputs)
		if fl.sends != want.Sent {
			t.Errorf("%s: replayed again, the machines sent %d messages, want %d", sc.Name, fl.sends, want.Sent)
		}
		runs++
	}
	if runs == 0 {
		t.Fatal("no scenario simulated")
	}
}
