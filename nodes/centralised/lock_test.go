package centralised

import (
	"fmt"
	"testing"
)

// step is one call on a lock: "req", "held", "rel" or "next", with the
// claim it names.
type step struct {
	op   string
	node string
	seq  int
}

func (l *lock) String() string {
	h := "free"
	if l.holder != nil {
		h = fmt.Sprintf("%s#%d", l.holder.node, l.holder.seq)
	}
	q := ""
	for _, c := range l.queue {
		q += fmt.Sprintf(" %s#%d", c.node, c.seq)
	}
	return h + " |" + q
}

func TestLock(t *testing.T) {
	tests := []struct {
		name    string
		steps   []step
		granted string // the claims next granted, in order
		want    string // the lock after the steps
	}{
		{"first come first served",
			[]step{{"req", "n2", 1}, {"req", "n1", 1}, {"next", "", 0}, {"rel", "n2", 1}, {"next", "", 0}},
			"n2#1 n1#1", "n1#1 |"},
		{"nothing granted while held",
			[]step{{"req", "n2", 1}, {"next", "", 0}, {"req", "n1", 1}, {"next", "", 0}},
			"n2#1", "n2#1 | n1#1"},
		{"a duplicate request is queued once",
			[]step{{"req", "n2", 1}, {"next", "", 0}, {"req", "n1", 1}, {"req", "n1", 1}, {"req", "n2", 1}},
			"n2#1", "n2#1 | n1#1"},
		{"a newer request supersedes the waiting one",
			[]step{{"req", "n1", 1}, {"req", "n2", 1}, {"req", "n1", 2}},
			"", "free | n2#1 n1#2"},
		{"a newer request from the holder means it left",
			[]step{{"req", "n1", 1}, {"next", "", 0}, {"req", "n2", 1}, {"req", "n1", 2}, {"next", "", 0}},
			"n1#1 n2#1", "n2#1 | n1#2"},
		{"a stale request is ignored",
			[]step{{"req", "n1", 2}, {"req", "n1", 1}},
			"", "free | n1#2"},
		{"release withdraws a waiting request",
			[]step{{"req", "n1", 1}, {"next", "", 0}, {"req", "n2", 1}, {"req", "n3", 1}, {"rel", "n2", 1}, {"rel", "n1", 1}, {"next", "", 0}},
			"n1#1 n3#1", "n3#1 |"},
		{"a release of another request changes nothing",
			[]step{{"req", "n1", 2}, {"next", "", 0}, {"rel", "n1", 1}, {"rel", "n2", 2}},
			"n1#2", "n1#2 |"},
		{"a declared hold takes a free lock and leaves the queue",
			[]step{{"req", "n2", 1}, {"req", "n1", 3}, {"held", "n1", 3}, {"next", "", 0}},
			"", "n1#3 | n2#1"},
		{"a declared hold does not take a held lock",
			[]step{{"req", "n2", 1}, {"next", "", 0}, {"held", "n1", 3}},
			"n2#1", "n2#1 |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l lock
			granted := ""
			for _, s := range tt.steps {
				c := claim{s.node, s.seq}
				switch s.op {
				case "req":
					l.request(c)
				case "held":
					l.held(c)
				case "rel":
					l.release(c)
				case "next":
					if g, ok := l.next(); ok {
						if granted != "" {
							granted += " "
						}
						granted += fmt.Sprintf("%s#%d", g.node, g.seq)
					}
				}
			}
			if granted != tt.granted {
				t.Errorf("granted %q, want %q", granted, tt.granted)
			}
			if got := l.String(); got != tt.want {
				t.Errorf("lock %q, want %q", got, tt.want)
			}
		})
	}
}

// held names the holder a conflicting declaration runs into.
func TestHeldNamesTheOtherHolder(t *testing.T) {
	var l lock
	if other := l.held(claim{"n1", 1}); other != "" {
		t.Errorf("free lock: other %q, want none", other)
	}
	if other := l.held(claim{"n1", 1}); other != "" {
		t.Errorf("the same hold again: other %q, want none", other)
	}
	if other := l.held(claim{"n2", 4}); other != "n1" {
		t.Errorf("other %q, want n1", other)
	}
}
