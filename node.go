package coup

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/coupharness/coup/nodes"
)

// Node is a machine of your own as coup runs it, in the simulator (Run,
// Test) and as a real node process (Serve).
type Node struct {
	// Name names the algorithm in histories, results and reports, when
	// the scenario names none ("raft").
	Name string
	// New builds one node's machine from the scenario's [params] (empty
	// when it has none). It should return an error for a bad value, and
	// end with p.Unused() so that a misspelt parameter is refused.
	New func(p *Params) (Machine, error)
	// Messages are the machine's message types, a value of each (zero
	// values will do, never pointers): a real node decodes what it
	// receives by its type, and the simulator decodes what the nemesis
	// corrupts.
	Messages []Msg
}

// errNode wraps what is wrong with a Node.
var errNode = errors.New("coup: bad Node")

// spec is the node as coup's drivers take an algorithm.
func (n Node) spec() (nodes.Spec, error) {
	if n.New == nil {
		return nodes.Spec{}, fmt.Errorf("%w: New is nil", errNode)
	}
	if len(n.Messages) == 0 {
		return nodes.Spec{}, fmt.Errorf("%w: Messages is empty: give a value of each message type", errNode)
	}
	seen := map[string]bool{}
	for i, m := range n.Messages {
		if m == nil {
			return nodes.Spec{}, fmt.Errorf("%w: Messages[%d] is nil", errNode, i)
		}
		if t := reflect.TypeOf(m); t.Kind() == reflect.Pointer {
			return nodes.Spec{}, fmt.Errorf("%w: Messages[%d] is a pointer (%s): give the value, with a value receiver for Type", errNode, i, t)
		}
		if seen[m.Type()] {
			return nodes.Spec{}, fmt.Errorf("%w: Messages[%d]: type %q twice", errNode, i, m.Type())
		}
		seen[m.Type()] = true
	}
	name := n.Name
	if name == "" {
		name = "machine"
	}
	return nodes.Spec{Name: name, Topology: "complete", Codec: nodes.NewCodec(n.Messages...), New: n.New}, nil
}
