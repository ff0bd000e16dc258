package coup

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type ping struct{}

func (ping) Type() string { return "ping" }

// echoer answers a client's echo and pings n2 on start.
type echoer struct{ env Env }

func (m *echoer) Start(env Env) {
	m.env = env
	env.Report(Report{What: "leader", Value: env.Self()})
	if env.Self() == "n1" {
		env.Send("n2", ping{})
	}
	env.SetTimer("t", time.Hour)
}
func (m *echoer) Receive(string, Msg) {}
func (m *echoer) Timeout(string)      {}
func (m *echoer) Request(r Request)   { m.env.Reply(r, r.Value) }

var echoNode = Node{Name: "echoer", New: func(p *Params) (Machine, error) { return &echoer{}, p.Unused() }, Messages: []Msg{ping{}}}

func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"src":"coup","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2"],"seed":3}}`,
		`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":5,"value":"hi"}}`,
	}, "\n") + "\n"
	var out, log bytes.Buffer
	if err := serve(echoNode, strings.NewReader(in), &out, &log); err != nil {
		t.Fatalf("serve: %v\nlog: %s", err, log.String())
	}
	got := out.String()
	for _, want := range []string{
		`"body":{"in_reply_to":1,"type":"init_ok"}`,
		`"dest":"coup","body":{"type":"report","what":"leader","value":"n1"}`,
		`"dest":"n2","body":{"type":"ping"}`,
		`"dest":"c1","body":{"type":"echo_ok","in_reply_to":5,"value":"hi"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the node's output lacks %s:\n%s", want, got)
		}
	}
}

func TestServeRefuses(t *testing.T) {
	var out, log bytes.Buffer
	err := serve(Node{Name: "x", New: echoNode.New}, strings.NewReader(""), &out, &log)
	if err == nil || !strings.Contains(err.Error(), "Messages is empty") {
		t.Errorf("a node without messages: %v", err)
	}
	bad := `{"src":"coup","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1"],"params":{"x":1}}}` + "\n"
	err = serve(echoNode, strings.NewReader(bad), &out, &log)
	if err == nil || !strings.Contains(err.Error(), "params.x") || !strings.Contains(out.String(), `"type":"error"`) {
		t.Errorf("an unknown parameter: %v; output %s", err, out.String())
	}
}
