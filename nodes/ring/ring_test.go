package ring

import "testing"

func TestNextPrev(t *testing.T) {
	r := []string{"n1", "n2", "n3"}
	for _, tt := range []struct{ self, next, prev string }{
		{"n1", "n2", "n3"}, {"n2", "n3", "n1"}, {"n3", "n1", "n2"}, {"x", "x", "x"},
	} {
		if got := Next(r, tt.self); got != tt.next {
			t.Errorf("Next(%s) = %s, want %s", tt.self, got, tt.next)
		}
		if got := Prev(r, tt.self); got != tt.prev {
			t.Errorf("Prev(%s) = %s, want %s", tt.self, got, tt.prev)
		}
	}
	if got := Next([]string{"n1"}, "n1"); got != "n1" {
		t.Errorf("Next in a ring of one = %s, want n1", got)
	}
}
