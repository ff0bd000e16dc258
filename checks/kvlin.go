package checks

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strconv"

	"github.com/anishathalye/porcupine"

	"github.com/coupharness/coup/history"
)

// KVVisualisationFile is the name of porcupine's visualisation of a
// non-linearizable lin-kv history, written into the run's folder.
const KVVisualisationFile = "kv-linearizable.html"

// kvState is one key of the store: its value, or no value (the key was
// never written).
type kvState struct {
	exists bool
	v      int64
}

func (s kvState) String() string {
	if !s.exists {
		return "no value"
	}
	return strconv.FormatInt(s.v, 10)
}

// kvInput is an operation given to the model; its output says whether it
// surely took effect (known: it returned ok) and, for a read, what it
// returned.
type kvInput struct{ op *kvOp }

type kvOutput struct {
	known bool
	read  kvRead
}

// kvStep applies an operation to one key. A read is legal when it
// returned the key's value (nothing when it has none); a write always
// is; a cas is legal when the key holds its from. An operation whose
// outcome is unknown (it timed out, or the history ended first) takes
// effect when it can and is legal either way: one that did not take
// effect is, to every operation that returned, the same as one that took
// effect after all of them, which is where its open end lets the checker
// place it, so the model need not branch.
func kvStep(s kvState, o *kvOp, out kvOutput) (bool, kvState) {
	switch o.f {
	case fWrite:
		return true, kvState{exists: true, v: o.arg}
	case fCas:
		if s.exists && s.v == o.arg {
			return true, kvState{exists: true, v: o.to}
		}
		return !out.known, s
	}
	r := out.read
	return !r.isOther && r.exists == s.exists && (!r.exists || r.v == s.v), s
}

var kvSeed = maphash.MakeSeed()

// kvModel is the key-value store as porcupine sees it: one register per
// key, the history partitioned by key, since operations on different keys
// never constrain each other.
var kvModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		index := map[int64]int{}
		var parts [][]porcupine.Operation
		for _, op := range ops {
			k := op.Input.(kvInput).op.key
			i, ok := index[k]
			if !ok {
				i = len(parts)
				index[k] = i
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		return parts
	},
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		return kvStep(state.(kvState), input.(kvInput).op, output.(kvOutput))
	},
	Hash: func(state any) uint64 {
		s := state.(kvState)
		var b [9]byte
		if s.exists {
			b[0] = 1
		}
		for i := range 8 {
			b[1+i] = byte(s.v >> (8 * i))
		}
		return maphash.Bytes(kvSeed, b[:])
	},
	DescribeOperation: func(input, output any) string {
		o, out := input.(kvInput).op, output.(kvOutput)
		res := "ok"
		switch {
		case !out.known:
			res = "? (timed out)"
		case o.f == fRead:
			res = out.read.String()
		}
		switch o.f {
		case fWrite:
			return fmt.Sprintf("%s write(%d) at %s → %s", o.process, o.arg, o.node, res)
		case fCas:
			return fmt.Sprintf("%s cas(%d, %d) at %s → %s", o.process, o.arg, o.to, o.node, res)
		}
		return fmt.Sprintf("%s read() at %s → %s", o.process, o.node, res)
	},
	DescribeState: func(state any) string { return state.(kvState).String() },
}

// kvLinearizable: the clients' reads, writes and compare-and-sets are
// linearizable against a key-value store, key by key (porcupine).
func kvLinearizable(h *history.History) Result {
	ops, bad, why := kvOps(h)
	if bad != nil {
		return Result{
			Valid:       Unknown,
			Explanation: fmt.Sprintf("event %d is a %s %s whose value is not in the lin-kv workload's form (%s), so the history cannot be judged", bad.Index, bad.F, bad.Type, why),
			Evidence:    []history.Event{*bad},
		}
	}
	keep := kvRelevant(h, ops)
	end := h.End() + 1
	clients := map[string]int{} // process -> porcupine's row, in order of appearance
	client := func(p string) int {
		if _, ok := clients[p]; !ok {
			clients[p] = len(clients)
		}
		return clients[p]
	}
	var pops []porcupine.Operation
	var dropped []*kvOp
	failed, unknown, reads := 0, 0, 0
	for i, o := range ops {
		ret, out := end, kvOutput{}
		switch o.outcome(h) {
		case history.OpFail:
			failed++
			continue
		case history.OpOK:
			ret, out = h.Events[o.done].Time, kvOutput{known: true, read: o.read}
			if o.f == fRead {
				reads++
			}
		default:
			unknown++
			if !keep[i] {
				dropped = append(dropped, o)
				continue
			}
		}
		pops = append(pops, porcupine.Operation{
			ClientId: client(o.process),
			Input:    kvInput{op: o},
			Call:     h.Events[o.invoke].Time,
			Output:   out,
			Return:   ret,
			Metadata: o,
		})
	}
	keys, _ := byKey(ops)
	r := Result{Figures: map[string]any{"operations": len(pops), "keys": len(keys), "reads": reads, "indeterminate": unknown, "failed": failed, "left_out": len(dropped)}}
	if len(pops) == 0 {
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("the history has no read, write or cas that returned ok or may have taken effect (%d failed, %d timed out and could not matter), so there is nothing to judge; run a lin-kv workload", failed, unknown)
		return r
	}
	switch porcupine.CheckOperationsTimeout(kvModel, pops, LinearizabilityBudget) {
	case porcupine.Ok:
		r.Valid = True
		r.Explanation = fmt.Sprintf("the %s on %s %s linearizable against a key-value store (%d timed out and may or may not have taken effect; %d failed and were left out)",
			plural(len(pops), "operation"), plural(len(keys), "key"), isAre(len(pops), "is", "are"), unknown, failed)
		return r
	case porcupine.Unknown:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("porcupine could not decide within %s whether the %s are linearizable (%d timed out, and each may or may not have taken effect); shorten the run, use more keys or lengthen the workload's timeout",
			LinearizabilityBudget, plural(len(pops), "operation"), unknown)
		return r
	}
	_, info := porcupine.CheckOperationsVerbose(kvModel, pops, LinearizabilityBudget)
	r.Valid = False
	explainKV(h, &r, pops, info)
	info.AddAnnotations(kvAnnotations(h, dropped))
	var buf bytes.Buffer
	if err := porcupine.Visualize(kvModel, info, &buf); err == nil {
		r.Files = []File{{Name: KVVisualisationFile, Data: buf.Bytes()}}
		r.Explanation += fmt.Sprintf("; porcupine's visualisation is %s in the run's folder", KVVisualisationFile)
	}
	return r
}

// explainKV names the first key no order fits and, on it, the operation
// that cannot be linearized: among those outside the longest prefix
// porcupine found, the one that returned first. The value the prefix
// leaves the key with says why.
func explainKV(h *history.History, r *Result, pops []porcupine.Operation, info porcupine.LinearizationInfo) {
	parts := kvModel.Partition(pops)
	partials := info.PartialLinearizations()
	var bad []string
	first := -1
	for p, part := range parts {
		longest := 0
		for _, l := range partials[p] {
			longest = max(longest, len(l))
		}
		if longest < len(part) {
			bad = append(bad, strconv.FormatInt(part[0].Input.(kvInput).op.key, 10))
			if first < 0 {
				first = p
			}
		}
	}
	r.Explanation = fmt.Sprintf("the %s %s not linearizable against a key-value store", plural(len(pops), "operation"), isAre(len(pops), "is", "are"))
	if first < 0 {
		return
	}
	r.figure("violated_keys", len(bad))
	part := parts[first]
	key := part[0].Input.(kvInput).op.key
	prefix, stuck := stuckAfter(partials[first], part)
	state := kvModel.Init().(kvState)
	setter := -1 // the operation of the prefix that gave the key its value
	for _, id := range prefix {
		o, out := part[id].Input.(kvInput).op, part[id].Output.(kvOutput)
		_, next := kvStep(state, o, out)
		if next != state || (o.f != fRead && out.known) {
			setter = id
		}
		state = next
	}
	o := part[stuck].Metadata.(*kvOp)
	keyText := fmt.Sprintf("key %d", key)
	if len(bad) > 1 {
		keyText = fmt.Sprintf("key %d (of %d keys no order fits: %s)", key, len(bad), joinNames(bad))
	}
	r.Explanation += fmt.Sprintf(" on %s: the longest order porcupine can fit takes %d of its %s and leaves it holding %s",
		keyText, len(prefix), plural(len(part), "operation"), state)
	if setter >= 0 {
		s := part[setter].Metadata.(*kvOp)
		r.Explanation += fmt.Sprintf(" (%s, invoked at %s)", s.describe(), fmtTime(h.Events[s.invoke].Time))
		r.Evidence = append(r.Evidence, h.Events[s.invoke])
		if s.done >= 0 {
			r.Evidence = append(r.Evidence, h.Events[s.done])
		}
		r.Nodes = append(r.Nodes, s.node)
	}
	if o.done < 0 || h.Events[o.done].Type != history.OpOK {
		sortEvents(r.Evidence)
		return // only an operation that returned can be what no order fits
	}
	done := h.Events[o.done]
	r.Evidence = append(r.Evidence, h.Events[o.invoke], done)
	sortEvents(r.Evidence)
	if len(r.Nodes) == 0 || r.Nodes[0] != o.node {
		r.Nodes = append([]string{o.node}, r.Nodes...)
	}
	r.Interval = &Interval{From: h.Events[o.invoke].Time, To: done.Time}
	what := "succeeded"
	rule := "a cas succeeds only when the key holds its from"
	switch o.f {
	case fRead:
		what = "returned " + o.read.String()
		rule = "a read returns the value of the last write or cas before it"
	case fWrite:
		rule = "no order of the operations around it fits"
	}
	r.Explanation += fmt.Sprintf(", and %s, invoked at %s and ok at %s, %s: it cannot come after that: %s",
		o.describe(), fmtTime(h.Events[o.invoke].Time), fmtTime(done.Time), what, rule)
}

// kvRelevant says, for each operation of ops, whether the checker must
// consider it. Every operation that returned is. One whose outcome is
// unknown may or may not have taken effect; leaving it out keeps only "did
// not", which is sound when its effect could never be seen by an operation
// that returned:
//
//   - a read whose outcome is unknown has no effect and returned nothing;
//   - a write or cas invoked after every operation on its key that returned
//     had returned can take effect after all of them;
//   - a write or cas whose value (a write's, a cas's to) no ok read of its
//     key returned and no cas of its key (whatever its outcome) starts from
//     is overwritten, if it took effect, before anything could see it.
//
// Operations whose outcome is unknown stay open to the end of the history,
// and each one open multiplies the orders porcupine must try.
func kvRelevant(h *history.History, ops []*kvOp) []bool {
	keep := make([]bool, len(ops))
	type seen struct {
		lastReturn int64
		values     map[int64]bool
	}
	keys := map[int64]*seen{}
	at := func(k int64) *seen {
		if keys[k] == nil {
			keys[k] = &seen{lastReturn: -1, values: map[int64]bool{}}
		}
		return keys[k]
	}
	for _, o := range ops {
		s := at(o.key)
		switch out := o.outcome(h); {
		case out == history.OpOK:
			s.lastReturn = max(s.lastReturn, h.Events[o.done].Time)
			if o.f == fRead && o.read.exists {
				s.values[o.read.v] = true
			}
			if o.f == fCas {
				s.values[o.arg] = true
			}
		case out != history.OpFail && o.f == fCas:
			s.values[o.arg] = true
		}
	}
	for i, o := range ops {
		switch o.outcome(h) {
		case history.OpOK:
			keep[i] = true
		case history.OpFail:
		default:
			s := at(o.key)
			v := o.arg
			if o.f == fCas {
				v = o.to
			}
			keep[i] = o.f != fRead && h.Events[o.invoke].Time <= s.lastReturn && s.values[v]
		}
	}
	return keep
}
