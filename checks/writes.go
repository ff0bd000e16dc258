package checks

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/coupharness/coup/history"
)

// SetDefaults are the checks a set scenario runs when it names none.
var SetDefaults = []string{"lost-writes"}

// The set workload's add (see workloads.Set); its read is fRead without a
// key.
const fAdd = "add"

// written is one write as lost-writes judges it: a set's add of an
// element, or a lin-kv write or cas of a value to a key (a cas writes its
// to).
type written struct {
	// node is the member that served it, when its completion says so,
	// else the one its request went to.
	process, node string
	f             string // add, write or cas
	key           int64  // lin-kv only
	value         int64  // the element, or the value written
	// invoke and done are positions in the history's events; done is -1
	// when the history ended before the write completed.
	invoke, done int
}

// outcome is the write's completion type: ok, fail, info, or "" for none.
func (w *written) outcome(h *history.History) string {
	if w.done < 0 {
		return ""
	}
	return h.Events[w.done].Type
}

// readOf is one read that returned ok: of the whole set, or of one key.
type readOf struct {
	process, node string
	key           int64 // lin-kv only
	invoke, done  int
	// values are the integers read: the set's elements, or the key's
	// value (none when the key had no value).
	values []int64
	// others are what was read that is not an integer, as text: no write
	// could have written it.
	others []string
}

// writesOf gathers the writes and the ok reads of a history, in order of
// invocation. A history with an add is a set's (kv false); one without is
// judged as lin-kv's. It returns the first operation event whose value is
// not in the workload's form, if any, with why.
func writesOf(h *history.History) (ws []*written, rs []*readOf, kv bool, bad *history.Event, why string) {
	kv = true
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == history.KindOp && e.F == fAdd {
			kv = false
			break
		}
	}
	if kv {
		ops, bad, why := kvOps(h)
		for _, o := range ops {
			switch o.f {
			case fWrite, fCas:
				v := o.arg
				if o.f == fCas {
					v = o.to
				}
				ws = append(ws, &written{process: o.process, node: o.node, f: o.f, key: o.key, value: v, invoke: o.invoke, done: o.done})
			case fRead:
				if o.outcome(h) != history.OpOK {
					continue
				}
				r := &readOf{process: o.process, node: o.node, key: o.key, invoke: o.invoke, done: o.done}
				switch {
				case o.read.isOther:
					r.others = []string{o.read.other}
				case o.read.exists:
					r.values = []int64{o.read.v}
				}
				rs = append(rs, r)
			}
		}
		servedBy(h, ws, rs)
		return ws, rs, true, bad, why
	}
	open := map[string]any{} // process -> its open *written or *readOf
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindOp || (e.F != fAdd && e.F != fRead) {
			continue
		}
		if e.Type == history.OpInvoke {
			switch e.F {
			case fAdd:
				v, err := strconv.ParseInt(strings.TrimSpace(e.Value), 10, 64)
				if err != nil && bad == nil {
					bad, why = e, fmt.Sprintf("an add's value must be its element, an integer, got %q", e.Value)
				}
				w := &written{process: e.Process, node: e.Node, f: fAdd, value: v, invoke: i, done: -1}
				ws = append(ws, w)
				open[e.Process] = w
			default:
				if v := strings.TrimSpace(e.Value); v != "" && v != "null" {
					delete(open, e.Process) // a read of a key: not the set's
					continue
				}
				open[e.Process] = &readOf{process: e.Process, node: e.Node, invoke: i, done: -1}
			}
			continue
		}
		switch o := open[e.Process].(type) {
		case *written:
			if e.F != fAdd {
				continue
			}
			o.done = i
		case *readOf:
			if e.F != fRead {
				continue
			}
			o.done = i
			if e.Type == history.OpOK {
				var err error
				if o.values, o.others, err = parseSet(e.Value); err != nil && bad == nil {
					bad, why = e, err.Error()
				}
				rs = append(rs, o)
			}
		default:
			continue
		}
		delete(open, e.Process)
	}
	servedBy(h, ws, rs)
	return ws, rs, false, bad, why
}

// servedBy names, as each operation's node, the member that served it
// when its completion says so (a real server's answer), rather than the
// one its client was bound to.
func servedBy(h *history.History, ws []*written, rs []*readOf) {
	for _, w := range ws {
		if w.done >= 0 && h.Events[w.done].Served != "" {
			w.node = h.Events[w.done].Served
		}
	}
	for _, r := range rs {
		if r.done >= 0 && h.Events[r.done].Served != "" {
			r.node = h.Events[r.done].Served
		}
	}
}

// parseSet reads an ok read of the whole set: a JSON array whose integers
// are elements; anything else in it (or a value that is not an array,
// which the workload records as a JSON string of its text) is read as
// text that no add could have added.
func parseSet(value string) (elems []int64, others []string, err error) {
	var raw json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil {
		return nil, nil, fmt.Errorf("a read of the set must return a JSON array of elements, got %q", value)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, []string{textOf(raw)}, nil
	}
	for _, x := range list {
		if v, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			elems = append(elems, v)
			continue
		}
		others = append(others, textOf(x))
	}
	return elems, others, nil
}

// textOf is a JSON value as text: a string's content, anything else as
// it is written.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
