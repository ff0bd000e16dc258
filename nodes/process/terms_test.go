package process

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/wire"
)

// termed is a machine that claims leadership in term 7 as it starts.
type termed struct{}

func (termed) Start(env nodes.Env) {
	term := int64(7)
	r := nodes.Leader(env.Self())
	r.Term = &term
	env.Report(r)
	env.Report(nodes.Leader("")) // and then gives none
}
func (termed) Receive(string, nodes.Msg) {}
func (termed) Timeout(string)            {}
func (termed) Request(nodes.Request)     {}

// A built-in algorithm's leader report carries its term to the harness
// when it gives one, and no term when it does not.
func TestReportCarriesTerm(t *testing.T) {
	spec := nodes.Spec{Name: "termed", Codec: nodes.NewCodec(), New: func(p *nodes.Params) (nodes.Machine, error) {
		return termed{}, p.Unused()
	}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(Options{In: inR, Out: outW, Log: io.Discard, Spec: spec})
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	send(t, inW, initLine)
	if h, _ := wire.ParseHead(next(t, sc).Body); h.Type != "init_ok" {
		t.Fatalf("got %s, want init_ok", h.Type)
	}
	for _, want := range []string{`{"type":"report","what":"leader","value":"n2","term":7}`, `{"type":"report","what":"leader","value":""}`} {
		env := next(t, sc)
		var got, exp any
		if err := json.Unmarshal(env.Body, &got); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(want), &exp)
		if b1, _ := json.Marshal(got); string(b1) != mustCanon(exp) {
			t.Errorf("got %s, want %s", env.Body, want)
		}
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func mustCanon(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
