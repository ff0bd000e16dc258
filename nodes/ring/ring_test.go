package ring

import (
	"fmt"
	"testing"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/nodetest"
)

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

// probe records what ByID and Others say when its machine starts.
type probe struct{ byID, others []string }

func (p *probe) Start(env nodes.Env) {
	p.byID, p.others = ByID(env), Others(env)
}
func (p *probe) Receive(string, nodes.Msg) {}
func (p *probe) Timeout(string)            {}
func (p *probe) Request(nodes.Request)     {}

func TestByIDAndOthers(t *testing.T) {
	var got []*probe
	spec := nodes.Spec{Name: "probe", Codec: nodes.NewCodec(), New: func(*nodes.Params) (nodes.Machine, error) {
		p := &probe{}
		got = append(got, p)
		return p, nil
	}}
	net, err := nodetest.New(spec, 4, []int{30, 10, 40, 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	net.Start()
	if want := "[n2 n4 n1 n3]"; fmt.Sprint(got[0].byID) != want {
		t.Errorf("ByID = %v, want %s", got[0].byID, want)
	}
	if want := "[n1 n2 n4]"; fmt.Sprint(got[2].others) != want {
		t.Errorf("Others for n3 = %v, want %s", got[2].others, want)
	}
}
