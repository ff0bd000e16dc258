package workloads

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Set is Jepsen's set workload, with the bodies of Maelstrom's g-set:
// clients add unique integers to a set that only grows,
//
//	{"type":"add","msg_id":1,"element":12}   → add_ok
//
// and, after the heal, the final reads (Final) read the whole set,
//
//	{"type":"read","msg_id":2}               → read_ok {"value":[1,12,…]}
//
// so that the lost-writes check can tell which acknowledged adds the
// store kept. Each client is bound to one node and loops: pause, one add,
// wait for its end (see loop). Elements are 0, 1, 2, … in the order the
// adds are drawn, so each is added once.
//
// The history records an add's element as its value (invoke 12, ok 12),
// and a read's answer as a JSON array: the integers read in increasing
// order, then anything else it held as JSON strings of its text (cut to
// MaxReadText bytes each), which no add could have added; an answer whose
// value is not an array is recorded as a JSON string of its text. A read
// invocation has no value.
type Set struct {
	// Clients is the number of clients.
	Clients int
	// Nodes are the nodes the clients talk to: client ci talks to
	// Nodes[(i−1) mod len(Nodes)].
	Nodes []string
	// Rate is how many adds the clients invoke per second over all
	// clients, when answers come at once (pauses exponential, mean
	// Clients/Rate).
	Rate float64
	// At is when the clients start; Until is when they stop adding.
	At, Until time.Duration
	// Seed seeds the pauses.
	Seed int64
	// Final are the final reads.
	Final Final

	l    loop
	next int64 // the next element
}

// Final configures a workload's final reads: after the heal, reads of
// everything the clients wrote (the whole set; each key written), which
// the lost-writes check compares with what was acknowledged.
type Final struct {
	// At is when the final reads begin, on the run's clock: after the
	// heal, so that the nemesis does nothing after them. 0 means none.
	At time.Duration
	// Readers are the clients that read ("c1"); empty means every client,
	// each through its own node.
	Readers []string
}

// The set workload's operations: FAdd, and FRead without a key.
const FAdd = "add"

type (
	setAdd struct {
		Element int64 `json:"element"`
	}
	setRead struct{}
)

var _ Workload = (*Set)(nil)

// Start starts every client.
func (w *Set) Start(c Clients) {
	w.l = loop{clients: w.Clients, nodes: w.Nodes, rate: w.Rate, at: w.At, until: w.Until, next: w.add,
		final: finalReads{at: w.Final.At, readers: w.Final.Readers, ops: func(*client) []Op { return []Op{SetReadOp()} }}}
	w.l.start(c, w.Seed, 0x676d736574)
}

// Complete goes on with the client whose operation ended.
func (w *Set) Complete(c Clients, done Completion) { w.l.complete(c, done) }

// add draws the next add: of the next element.
func (w *Set) add(*client) Op {
	e := w.next
	w.next++
	v := strconv.FormatInt(e, 10)
	return Op{F: FAdd, Fields: setAdd{Element: e}, Value: v, Result: constant(v)}
}

// SetReadOp is a read of the whole set.
func SetReadOp() Op {
	return Op{F: FRead, Fields: setRead{}, Result: SetReadValue, Long: true}
}

// SetReadValue is the JSON text the history records for a read_ok of
// the whole set: see Set.
func SetReadValue(body []byte) string {
	var a struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &a) != nil {
		return quoteText(string(body))
	}
	var list []json.RawMessage
	if raw := string(a.Value); raw == "" || raw == "null" || json.Unmarshal(a.Value, &list) != nil {
		if raw == "" {
			raw = "null"
		}
		return quoteText(raw)
	}
	var ints []int64
	var others []string
	for _, x := range list {
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			ints = append(ints, n)
			continue
		}
		var s string
		if json.Unmarshal(x, &s) != nil {
			s = string(x)
		}
		others = append(others, quoteText(s))
	}
	slices.Sort(ints)
	b := make([]byte, 0, 8*len(ints)+2)
	b = append(b, '[')
	for i, n := range ints {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	for i, o := range others {
		if i > 0 || len(ints) > 0 {
			b = append(b, ',')
		}
		b = append(b, o...)
	}
	return string(append(b, ']'))
}
