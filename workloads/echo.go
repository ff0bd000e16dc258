package workloads

import (
	"encoding/json"
	"fmt"
	"time"
)

// Echo is Maelstrom's echo workload: clients send
//
//	{"type":"echo","msg_id":1,"echo":"echo c1 #1"}
//
// and expect echo_ok with the same echo. Each client is bound to one
// node and loops: pause, one echo, wait for its end (see loop). Every
// payload is a distinct string. The history records the payload as the
// invocation's value and the echo the node sent back as the ok
// completion's: a string as it is, any other JSON value as its text.
type Echo struct {
	// Clients is the number of clients.
	Clients int
	// Nodes are the nodes the clients talk to: client ci talks to
	// Nodes[(i−1) mod len(Nodes)].
	Nodes []string
	// Rate is how many echoes the clients send per second over all
	// clients, when answers come at once (pauses exponential, mean
	// Clients/Rate).
	Rate float64
	// At is when the clients start; Until is when they stop sending.
	At, Until time.Duration
	// Seed seeds the pauses.
	Seed int64

	l loop
}

// FEcho is the echo workload's operation.
const FEcho = "echo"

type echoFields struct {
	Echo string `json:"echo"`
}

var _ Workload = (*Echo)(nil)

// Start starts every client.
func (w *Echo) Start(c Clients) {
	w.l = loop{clients: w.Clients, nodes: w.Nodes, rate: w.Rate, at: w.At, until: w.Until, next: w.next}
	w.l.start(c, w.Seed, 0x6563686f)
}

// Complete goes on with the client whose operation ended.
func (w *Echo) Complete(c Clients, done Completion) { w.l.complete(c, done) }

func (w *Echo) next(cl *client) Op {
	payload := fmt.Sprintf("echo c%d #%d", cl.i, cl.ops+1)
	return Op{F: FEcho, Fields: echoFields{Echo: payload}, Value: payload, Result: EchoValue}
}

// EchoValue is what the history records for an echo_ok body: its echo,
// a string as it is, any other JSON value as its text, "" when there is
// none.
func EchoValue(body []byte) string {
	var a struct {
		Echo json.RawMessage `json:"echo"`
	}
	if json.Unmarshal(body, &a) != nil || len(a.Echo) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(a.Echo, &s) == nil {
		return s
	}
	return string(a.Echo)
}
