package checks

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/coupharness/coup/history"
)

// KVDefaults are the checks a lin-kv scenario runs when it names none.
var KVDefaults = []string{"kv-linearizable"}

// The operations of the lin-kv workload (see workloads.KV).
const (
	fRead  = "read"
	fWrite = "write"
	fCas   = "cas"
)

// kvOp is one lin-kv operation: an invocation and its completion, with
// the values the history gives them in Jepsen's form ([k,v], [k,[from,to]];
// see workloads.KV).
type kvOp struct {
	process, node, f string
	key              int64
	// arg is what a write writes, or a cas's from; to is a cas's to.
	arg, to int64
	// read is what an ok read returned.
	read kvRead
	// invoke and done are positions in the history's events; done is -1
	// when the history ended before the operation completed.
	invoke, done int
}

// kvRead is what a read returned: a value, no value (the key does not
// exist), or something that is not an integer (other), which no write
// could have written.
type kvRead struct {
	exists bool
	v      int64
	// isOther marks a value that is not an integer; other is its text.
	isOther bool
	other   string
}

// String writes the value read for a sentence.
func (r kvRead) String() string {
	switch {
	case r.isOther:
		return strconv.Quote(r.other)
	case !r.exists:
		return "nothing (no such key)"
	}
	return strconv.FormatInt(r.v, 10)
}

// outcome is the operation's completion type: ok, fail, info, or "" for
// none.
func (o *kvOp) outcome(h *history.History) string {
	if o.done < 0 {
		return ""
	}
	return h.Events[o.done].Type
}

// describe names the operation for a sentence: "c4's read of key 2 at n1".
func (o *kvOp) describe() string {
	switch o.f {
	case fWrite:
		return fmt.Sprintf("%s's write of %d to key %d at %s", o.process, o.arg, o.key, o.node)
	case fCas:
		return fmt.Sprintf("%s's cas of key %d from %d to %d at %s", o.process, o.key, o.arg, o.to, o.node)
	}
	return fmt.Sprintf("%s's read of key %d at %s", o.process, o.key, o.node)
}

// kvOps pairs every read, write and cas invocation with its completion,
// in the order of the invocations, as lockOps does for the lock. It
// returns the first operation event whose value is not in the workload's
// form, if any, with why.
func kvOps(h *history.History) (ops []*kvOp, bad *history.Event, why string) {
	open := map[string]*kvOp{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp || (e.F != fRead && e.F != fWrite && e.F != fCas) {
			continue
		}
		if e.Type == history.OpInvoke {
			o := &kvOp{process: e.Process, node: e.Node, f: e.F, invoke: i, done: -1}
			if err := o.parseInvoke(e.Value); err != nil && bad == nil {
				bad, why = e, err.Error()
			}
			ops = append(ops, o)
			open[e.Process] = o
			continue
		}
		o := open[e.Process]
		if o == nil || o.f != e.F {
			continue
		}
		o.done = i
		delete(open, e.Process)
		if o.f == fRead && e.Type == history.OpOK {
			r, err := parseRead(e.Value, o.key)
			if err != nil && bad == nil {
				bad, why = e, err.Error()
			}
			o.read = r
		}
	}
	return ops, bad, why
}

// parseInvoke reads an invocation's value: [k,null] for a read, [k,v] for
// a write, [k,[from,to]] for a cas.
func (o *kvOp) parseInvoke(value string) error {
	var pair []json.RawMessage
	if err := json.Unmarshal([]byte(value), &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("a %s's value must be [key, argument], got %q", o.f, value)
	}
	var err error
	if o.key, err = strconv.ParseInt(string(pair[0]), 10, 64); err != nil {
		return fmt.Errorf("a %s's key must be an integer, got %q", o.f, value)
	}
	switch o.f {
	case fWrite:
		if o.arg, err = strconv.ParseInt(string(pair[1]), 10, 64); err != nil {
			return fmt.Errorf("a write's value must be [key, integer], got %q", value)
		}
	case fCas:
		var ft []int64
		if json.Unmarshal(pair[1], &ft) != nil || len(ft) != 2 {
			return fmt.Errorf("a cas's value must be [key, [from, to]] with integers, got %q", value)
		}
		o.arg, o.to = ft[0], ft[1]
	}
	return nil
}

// parseRead reads an ok read's value: [k,v] with v an integer, null (no
// such key) or a string (a value that is not an integer, as its text).
func parseRead(value string, key int64) (kvRead, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal([]byte(value), &pair); err != nil || len(pair) != 2 {
		return kvRead{isOther: true, other: value}, fmt.Errorf("a read's result must be [key, value], got %q", value)
	}
	if k, err := strconv.ParseInt(string(pair[0]), 10, 64); err != nil || k != key {
		return kvRead{isOther: true, other: value}, fmt.Errorf("a read's result names key %s, but the read was of key %d", pair[0], key)
	}
	raw := string(pair[1])
	if raw == "null" {
		return kvRead{}, nil
	}
	if v, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return kvRead{exists: true, v: v}, nil
	}
	var text string
	if json.Unmarshal(pair[1], &text) == nil {
		return kvRead{isOther: true, other: text}, nil
	}
	return kvRead{isOther: true, other: raw}, nil
}

// byKey groups operations by key, keys in increasing order.
func byKey(ops []*kvOp) (keys []int64, groups map[int64][]*kvOp) {
	groups = map[int64][]*kvOp{}
	for _, o := range ops {
		if _, ok := groups[o.key]; !ok {
			keys = append(keys, o.key)
		}
		groups[o.key] = append(groups[o.key], o)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys, groups
}
