package verdict_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/report"
	"github.com/coupharness/coup/verdict"
)

// FuzzEvaluate judges any history: the results agree with themselves (the
// overall verdict composes the checks', the exit code matches the
// outcome) and render as JSON and as a report.
func FuzzEvaluate(f *testing.F) {
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"s","algorithm":"bully","nodes":["n1","n2"],"ids":[1,2],"expect":{"valid":false,"violations":["two-leaders"]}}}
{"i":1,"t":1,"kind":"process","node":"n1","what":"start"}
{"i":2,"t":1,"kind":"process","node":"n2","what":"start"}
{"i":3,"t":5,"kind":"report","node":"n1","what":"leader","value":"n1"}
{"i":4,"t":6,"kind":"report","node":"n2","what":"leader","value":"n2"}
{"i":5,"t":9,"kind":"end"}`)
	f.Add(`{"i":0,"t":0,"kind":"meta","meta":{"scenario":"m","algorithm":"centralised","nodes":["n1"],"ids":[1],"checks":["mutex-linearizable","mutex-cs"]}}
{"i":1,"t":1,"kind":"process","node":"n1","what":"start"}
{"i":2,"t":2,"kind":"op","process":"c1","type":"invoke","f":"acquire","node":"n1","value":"c1"}
{"i":3,"t":3,"kind":"op","process":"c1","type":"ok","f":"acquire","node":"n1","value":"c1"}`)
	f.Fuzz(func(t *testing.T, text string) {
		h, err := history.Read(strings.NewReader(text))
		if err != nil || len(h.Events) > 200 {
			return
		}
		res, err := verdict.Evaluate(h)
		if err != nil {
			return // an unknown check named in the meta event
		}
		var vs []checks.Validity
		for _, name := range res.Order {
			vs = append(vs, res.Checks[name].Valid)
		}
		if got := checks.Compose(vs...); got != res.Valid {
			t.Fatalf("valid %v, but the checks compose to %v", res.Valid, got)
		}
		want := map[string]int{verdict.AsExpected: verdict.ExitOK, verdict.Unexpected: verdict.ExitUnexpected, verdict.Unknown: verdict.ExitUnknown}[res.Outcome]
		if res.ExitCode != want {
			t.Fatalf("outcome %q with exit %d", res.Outcome, res.ExitCode)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		if err := report.Write(&sb, res, h); err != nil {
			t.Fatal(err)
		}
		_ = res.Summary()
	})
}
