package checks

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// Bounds and times near the largest int64, as a crafted history may give
// them, never wrap around into a definite verdict: a deadline the run does
// not reach makes the check unknown, and no explanation names a negative
// time.
func TestBoundsNearTheLargestTime(t *testing.T) {
	huge := int64(math.MaxInt64)
	meta := func(extra string) string {
		return `{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"x","nodes":["n1","n2"],"ids":[1,2],"seed":1` + extra + `}}`
	}
	election := strings.Join([]string{
		`{"i":1,"t":0,"kind":"process","node":"n1","what":"start"}`,
		`{"i":2,"t":0,"kind":"process","node":"n2","what":"start"}`,
		`{"i":3,"t":1000,"kind":"report","node":"n1","what":"leader","value":"n2"}`,
		`{"i":4,"t":2000,"kind":"report","node":"n2","what":"leader","value":"n2"}`,
		`{"i":5,"t":3000000,"kind":"end"}`,
	}, "\n")
	lock := strings.Join([]string{
		`{"i":1,"t":0,"kind":"process","node":"n1","what":"start"}`,
		`{"i":2,"t":0,"kind":"process","node":"n2","what":"start"}`,
		`{"i":3,"t":1000,"kind":"op","process":"c1","type":"invoke","f":"acquire","node":"n1","value":"c1"}`,
		`{"i":4,"t":5000,"kind":"op","process":"c1","type":"ok","f":"acquire","node":"n1","value":"c1"}`,
		`{"i":5,"t":3000000,"kind":"end"}`,
	}, "\n")
	tests := []struct {
		name, meta, events, check string
		want                      Validity
	}{
		{"termination bound", fmt.Sprintf(`,"termination_ns":%d`, huge), election, "termination", Unknown},
		{"stabilisation bound after GST", fmt.Sprintf(`,"gst_ns":500,"stabilisation_ns":%d`, huge), election, "eventual-leadership", Unknown},
		{"termination bound for eventual leadership", fmt.Sprintf(`,"termination_ns":%d`, huge), election, "eventual-leadership", Unknown},
		{"GST", fmt.Sprintf(`,"gst_ns":%d`, huge), election, "eventual-leadership", Unknown},
		{"progress bound", fmt.Sprintf(`,"progress_ns":%d`, huge), lock, "mutex-progress", Unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.Read(strings.NewReader(meta(tc.meta) + "\n" + tc.events))
			if err != nil {
				t.Fatal(err)
			}
			c, _ := Lookup(tc.check)
			r := c.Run(h)
			if r.Valid != tc.want {
				t.Errorf("%s: got %v, want %v: %s", tc.check, r.Valid, tc.want, r.Explanation)
			}
			if strings.Contains(r.Explanation, "-") && strings.Contains(r.Explanation, "-9") {
				t.Errorf("explanation names a negative time: %s", r.Explanation)
			}
			for k, v := range r.Figures {
				if n, ok := v.(int64); ok && n < 0 && k != "after_gst_ns" {
					t.Errorf("figure %s = %d", k, n)
				}
			}
		})
	}
}

// An event whose time is beyond any run's is not read as an event: it is
// skipped as a bad line, so no check works with it.
func TestEventTimeBeyondAnyRun(t *testing.T) {
	src := `{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"x","nodes":["n1"],"ids":[1],"seed":1}}
{"i":1,"t":0,"kind":"process","node":"n1","what":"start"}
{"i":2,"t":9223372036854775807,"kind":"report","node":"n1","what":"leader","value":"n1"}
{"i":3,"t":-5,"kind":"report","node":"n1","what":"leader","value":"n1"}`
	h, err := history.Read(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 2 || len(h.Bad) != 2 || h.Bad[0].Line != 3 || h.Bad[1].Line != 4 {
		t.Fatalf("got %d events and bad lines %+v, want lines 3 and 4 skipped", len(h.Events), h.Bad)
	}
}
