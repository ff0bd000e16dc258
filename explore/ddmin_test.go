package explore

import (
	"slices"
	"testing"
)

// Ddmin finds the items a failure needs, however they are spread, with
// far fewer tests than subsets; and it stops when told to.
func TestDDMin(t *testing.T) {
	tests := []struct {
		n    int
		need []int
	}{
		{16, []int{3, 11}},
		{1, []int{0}},
		{5, nil},
		{40, []int{0, 17, 39}},
		{7, []int{0, 1, 2, 3, 4, 5, 6}},
	}
	for _, tt := range tests {
		calls := 0
		got := Ddmin(tt.n, func(keep []int) (bool, bool) {
			calls++
			for _, x := range tt.need {
				if !slices.Contains(keep, x) {
					return false, false
				}
			}
			return true, false
		})
		if !slices.Equal(got, tt.need) && !(len(got) == 0 && len(tt.need) == 0) {
			t.Errorf("n=%d needing %v: got %v", tt.n, tt.need, got)
		}
		if calls > 4*tt.n+4 {
			t.Errorf("n=%d: %d tests", tt.n, calls)
		}
	}
	calls := 0
	got := Ddmin(16, func(keep []int) (bool, bool) { calls++; return false, calls == 3 })
	if calls != 3 || len(got) != 16 {
		t.Errorf("told to stop after 3 tests: %d tests, kept %v", calls, got)
	}
}
