package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/lifecycle"
)

// A leader report's term is recorded as the node gave it, term 0 included;
// a report without one is recorded without one; a report whose term is not
// a non-negative integer is refused whole: logged, counted and recorded
// as refused.
func TestReportTerms(t *testing.T) {
	log, err := os.Create(filepath.Join(t.TempDir(), "harness.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	r := &run{rec: history.NewRecorder(nil, func() int64 { return 0 }, true), log: lifecycle.NewLog(log, nil)}
	r.router = &router{r: r, counts: map[string]int64{}}
	tests := []struct {
		body string
		term string // the term recorded: "" for none, "-" for no event
	}{
		{`{"type":"report","what":"leader","value":"n1","term":3}`, "3"},
		{`{"type":"report","what":"leader","value":"n1","term":0}`, "0"},
		{`{"type":"report","what":"leader","value":"n1"}`, ""},
		{`{"type":"report","what":"leader","value":"n1","term":null}`, ""},
		{`{"type":"report","what":"leader","value":"n1","term":9223372036854775807}`, "9223372036854775807"},
		{`{"type":"report","what":"leader","value":"n1","term":-1}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":1.5}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":2.0}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":1e3}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":"3"}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":9223372036854775808}`, "-"},
		{`{"type":"report","what":"leader","value":"n1","term":[3]}`, "-"},
	}
	refused := 0
	for _, tt := range tests {
		before := len(r.rec.Events())
		r.report("n1", []byte(tt.body))
		es := r.rec.Events()[before:]
		switch {
		case tt.term == "-":
			refused++
			if len(es) != 1 || es[0].Kind != history.KindRefused || es[0].What != RefusedReport {
				t.Errorf("%s: recorded %+v, want it refused", tt.body, es)
			}
		case len(es) != 1:
			t.Errorf("%s: %d events recorded, want 1", tt.body, len(es))
		case tt.term == "" && es[0].Term != nil:
			t.Errorf("%s: recorded term %d, want none", tt.body, *es[0].Term)
		case tt.term != "" && (es[0].Term == nil || strconv.FormatInt(*es[0].Term, 10) != tt.term):
			t.Errorf("%s: recorded term %v, want %s", tt.body, es[0].Term, tt.term)
		}
	}
	if got := r.router.counts[history.CountRefused+"."+RefusedReport]; got != int64(refused) {
		t.Errorf("%s.%s = %d, want %d", history.CountRefused, RefusedReport, got, refused)
	}
	text, _ := os.ReadFile(log.Name())
	if !strings.Contains(string(text), "n1: refused (report): term -1 is negative") {
		t.Errorf("the log does not say why a negative term was refused:\n%s", text)
	}
}
