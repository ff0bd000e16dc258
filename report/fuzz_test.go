package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// jsonl writes a history's events as history.jsonl holds them.
func jsonl(t testing.TB, h *history.History) string {
	var b strings.Builder
	for _, e := range h.Events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzReport renders the report of any history the fuzzer finds: it must
// never fail, panic or hang (the fuzzer's own timeout catches a loop), and
// always write a whole page.
func FuzzReport(f *testing.F) {
	const max = 9223372036854775807
	seeds := []*history.History{
		reportHistory(),
		fatesHistory(f),
		extremeHistory(nil, 1000, max-10, 3000, max, -5, 6000),
		extremeHistory(func(m *history.Meta) { m.GST, m.Termination, m.Stabilisation, m.Progress = max, max, max, max }, 1, 2, 3),
	}
	for _, h := range seeds {
		f.Add(jsonl(f, h))
	}
	f.Add(`{"kind":"meta","meta":{"scenario":"x","algorithm":"centralised","nodes":["n1"],"simulated":true}}
{"t":1,"kind":"op","process":"c1","type":"invoke","f":"acquire","node":"n1","value":"c1"}
{"t":9223372036854775807,"kind":"op","process":"c1","type":"ok","f":"acquire"}
{"t":5,"kind":"report","node":"n1","what":"metric","name":"m","value":"1e308"}
{"t":6,"kind":"report","node":"n1","what":"metric","name":"m","value":"-1e308"}
`)
	budget := checks.LinearizabilityBudget
	checks.LinearizabilityBudget = 200 * time.Millisecond
	f.Cleanup(func() { checks.LinearizabilityBudget = budget })
	f.Fuzz(func(t *testing.T, text string) {
		h, err := history.Read(strings.NewReader(text))
		if err != nil || len(h.Events) > 400 {
			return
		}
		res, err := verdict.Evaluate(h)
		if err != nil {
			return // an unknown check named in the meta: an input error, not the report's
		}
		var buf bytes.Buffer
		if err := Write(&buf, res, h); err != nil {
			t.Fatalf("report: %v", err)
		}
		if !bytes.HasSuffix(buf.Bytes(), []byte("</html>\n")) {
			t.Fatalf("the report is not a whole page")
		}
	})
}
