package checks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// echoOp records a whole echo: sent with payload, ended as typ with back.
func (b *hb) echoOp(p, node, payload, typ, back string, from, to int64) *hb {
	return b.call(p, fEcho, node, payload, from).retv(p, typ, fEcho, back, to)
}

func TestEchoHandMade(t *testing.T) {
	base := func() *hb { return hist("n1", "n2").starts(0, "n1", "n2") }
	tests := []struct {
		name     string
		h        *history.History
		want     Validity
		words    string
		evidence string
	}{
		{"every echo matches", base().echoOp("c1", "n1", "echo c1 #1", history.OpOK, "echo c1 #1", 0, 5).
			echoOp("c2", "n2", "echo c2 #1", history.OpOK, "echo c2 #1", 6, 8).end(20).h(), True, "every one of the 2 ok echoes came back with its payload", ""},
		{"one comes back with another payload", base().echoOp("c1", "n1", "echo c1 #1", history.OpOK, "echo c1 #1", 0, 5).
			echoOp("c2", "n2", "echo c2 #1", history.OpOK, "echo c1 #1", 6, 9).end(20).h(), False,
			`1 echo of 2 ok echoes came back with another payload: the first, c2's echo at n2, invoked at 0.006s with "echo c2 #1", came back at 0.009s with "echo c1 #1"`, "[5 6]"},
		{"an empty answer", base().echoOp("c1", "n1", "echo c1 #1", history.OpOK, "", 0, 5).end(20).h(), False, `with ""`, "[3 4]"},
		{"failed and timed out are counted", base().echoOp("c1", "n1", "echo c1 #1", history.OpOK, "echo c1 #1", 0, 5).
			echoOp("c2", "n2", "echo c2 #1", history.OpFail, "not supported", 6, 8).
			echoOp("c3", "n2", "echo c3 #1", history.OpInfo, "timed out", 10, 600).call("c4", fEcho, "n1", "echo c4 #1", 700).end(800).h(), True, "(1 failed, 2 timed out)", ""},
		{"nothing returned", base().echoOp("c1", "n1", "echo c1 #1", history.OpInfo, "timed out", 0, 500).end(800).h(), Unknown, "no echo returned ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judge(t, "echo", tt.h)
			if r.Valid != tt.want || !strings.Contains(r.Explanation, tt.words) {
				t.Errorf("got %v (%s), want %v with %q", r.Valid, r.Explanation, tt.want, tt.words)
			}
			if got := fmt.Sprint(indexes(r.Evidence)); tt.evidence != "" && got != tt.evidence {
				t.Errorf("evidence %s, want %s", got, tt.evidence)
			}
		})
	}
}
