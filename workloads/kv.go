package workloads

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// KV is Maelstrom's lin-kv workload: clients read, write and
// compare-and-set integer keys holding integer values, with Maelstrom's
// request bodies:
//
//	{"type":"read","msg_id":1,"key":3}                 → read_ok {"value":4}
//	{"type":"write","msg_id":2,"key":3,"value":4}      → write_ok
//	{"type":"cas","msg_id":3,"key":3,"from":4,"to":1}  → cas_ok
//
// or an error (20 key does not exist, 22 precondition failed, 11
// temporarily unavailable, ...). Each client is bound to one node and
// loops: pause, one operation, wait for its end (see loop).
//
// The history records each operation in Jepsen's form, as JSON text in
// the op event's value:
//
//	read   invoke [3,null]     ok [3,4]  (the value read; null: no such key)
//	write  invoke [3,4]        ok [3,4]
//	cas    invoke [3,[4,1]]    ok [3,[4,1]]
//
// A value read that is not an integer is recorded as a JSON string
// holding its text ([3,"\"4\""]), which no write could have written. A
// failed or timed-out operation's completion holds the error's text.
type KV struct {
	// Clients is the number of clients.
	Clients int
	// Nodes are the nodes the clients talk to: client ci talks to
	// Nodes[(i−1) mod len(Nodes)].
	Nodes []string
	// Rate is how many operations the clients invoke per second over all
	// clients, when answers come at once: before each operation a client
	// pauses a random time, exponentially distributed with mean
	// Clients/Rate.
	Rate float64
	// Keys is how many keys the clients use: 0 to Keys−1.
	Keys int
	// Values is how many values writes and compare-and-sets use: 0 to
	// Values−1 (Maelstrom uses 5, so that a cas often finds its from).
	Values int
	// Mix weighs the operations: a client picks read, write or cas with
	// probabilities in proportion to Read, Write and Cas.
	Mix Mix
	// At is when the clients start; Until is when they stop invoking.
	At, Until time.Duration
	// Seed seeds the pauses and the choices of operation, key and value.
	Seed int64
	// Final are the final reads: each reader reads every key written or
	// compared (in increasing order), and its history records error 20
	// (key does not exist) as a read of no value.
	Final Final

	l       loop
	written map[int]bool // the keys of the writes and cas drawn
}

// Mix weighs the lin-kv operations.
type Mix struct {
	Read, Write, Cas float64
}

// The operations of the lin-kv workload.
const (
	FRead  = "read"
	FWrite = "write"
	FCas   = "cas"
)

// The request fields of the lin-kv operations, in Maelstrom's order.
type (
	kvRead struct {
		Key int `json:"key"`
	}
	kvWrite struct {
		Key   int `json:"key"`
		Value int `json:"value"`
	}
	kvCas struct {
		Key  int `json:"key"`
		From int `json:"from"`
		To   int `json:"to"`
	}
)

var _ Workload = (*KV)(nil)

// Start starts every client.
func (w *KV) Start(c Clients) {
	w.written = map[int]bool{}
	w.l = loop{clients: w.Clients, nodes: w.Nodes, rate: w.Rate, at: w.At, until: w.Until, next: w.next,
		final: finalReads{at: w.Final.At, readers: w.Final.Readers, ops: w.finalReads}}
	w.l.start(c, w.Seed, 0x6c696e6b76)
}

// Complete goes on with the client whose operation ended.
func (w *KV) Complete(c Clients, done Completion) { w.l.complete(c, done) }

// next draws an operation.
func (w *KV) next(*client) Op {
	rng := w.l.rng
	k := rng.IntN(max(w.Keys, 1))
	v := func() int { return rng.IntN(max(w.Values, 1)) }
	total := w.Mix.Read + w.Mix.Write + w.Mix.Cas
	x := rng.Float64() * total
	switch {
	case x < w.Mix.Read || total <= 0:
		return Op{F: FRead, Fields: kvRead{Key: k}, Value: KVValue(k, "null"), Result: readResult(k)}
	}
	w.written[k] = true
	switch {
	case x < w.Mix.Read+w.Mix.Write:
		val := v()
		value := KVValue(k, strconv.Itoa(val))
		return Op{F: FWrite, Fields: kvWrite{Key: k, Value: val}, Value: value, Result: constant(value)}
	default:
		from, to := v(), v()
		value := KVValue(k, fmt.Sprintf("[%d,%d]", from, to))
		return Op{F: FCas, Fields: kvCas{Key: k, From: from, To: to}, Value: value, Result: constant(value)}
	}
}

// finalReads are a reader's final reads: one of each key written.
func (w *KV) finalReads(*client) []Op {
	var ops []Op
	for _, k := range slices.Sorted(maps.Keys(w.written)) {
		none := KVValue(k, "null")
		ops = append(ops, Op{F: FRead, Fields: kvRead{Key: k}, Value: none, Result: readResult(k), Absent: none})
	}
	return ops
}

// KVValue is the history's value of a lin-kv operation on key k: [k,v],
// with v JSON text.
func KVValue(k int, v string) string { return "[" + strconv.Itoa(k) + "," + v + "]" }

// constant records the invocation's value again on an ok answer.
func constant(value string) func([]byte) string {
	return func([]byte) string { return value }
}

// readResult records a read's answer: [k,v] with v the value read.
func readResult(k int) func([]byte) string {
	return func(body []byte) string {
		return KVValue(k, KVReadValue(body))
	}
}

// KVReadValue is the JSON text the history records for the value of a
// read_ok body: an integer as it is, null when the value is null or
// missing, and anything else as a JSON string holding its text (cut to
// MaxReadText bytes), which no write could have written.
func KVReadValue(body []byte) string {
	var a struct {
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &a) != nil {
		return quoteText(string(body))
	}
	raw := string(a.Value)
	if raw == "" || raw == "null" {
		return "null"
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return quoteText(raw)
}

// MaxReadText bounds the text of a read value that is not an integer, as
// the history records it.
const MaxReadText = 64

// quoteText is text as a JSON string, cut to MaxReadText bytes.
func quoteText(text string) string {
	if len(text) > MaxReadText {
		text = text[:MaxReadText] + "…"
	}
	b, _ := json.Marshal(text) // a string always marshals
	return string(b)
}
