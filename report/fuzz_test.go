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
		opsHistory(f),
		serversHistory(f),
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
	// Link events and operations at the ends of time, with counts that
	// make no sense: the links view and the operations section saturate.
	f.Add(`{"kind":"meta","meta":{"scenario":"x","algorithm":"etcd","nodes":["n1","n2"],"servers":true}}
{"t":-9223372036854775808,"kind":"op","process":"c1","type":"invoke","f":"read","node":"n1"}
{"t":9223372036854775807,"kind":"op","process":"c1","type":"info","f":"read"}
{"t":9223372036854775807,"kind":"link","src":"n1","dest":"n2","counts":{"span_ns":9223372036854775807,"bytes":9223372036854775807,"dropped_bytes":-4}}
{"t":3,"kind":"link","src":"n2","dest":"n1","counts":{"span_ns":-7,"bytes":5}}
{"t":4,"kind":"nemesis","what":"partition","phase":"start","name":"p","detail":"n1 | n2 | (one way: the first side cannot reach the rest)"}
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
