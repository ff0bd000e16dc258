package checks

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coupharness/coup/history"
)

// MaxLostNamed bounds the lost writes a lost-writes result names (in its
// figures and its sentence); the counts count them all.
const MaxLostNamed = 20

// LostWindowGap is the widest gap between the acknowledgements of two lost
// writes of one window: lost writes acknowledged closer together than this
// are one window of loss.
const LostWindowGap int64 = 1e9

// maxLostWindows bounds the windows a result lists.
const maxLostWindows = 20

// The fates of a write, as lost-writes counts them.
type fate int

const (
	// An acknowledged write...
	fatePresent     fate = iota // ...that every final read after it sees
	fateLost                    // ...that no final read after it sees, and nothing could have overwritten
	fateDivergent               // ...that some final reads after it see and others do not
	fateOverwritten             // ...that no final read sees, but that a later write may have overwritten (lin-kv)
	fateUnjudged                // ...acknowledged after every final read of it began
	// A write that was not acknowledged (info, fail, or open at the end)...
	fateRecovered // ...that a final read sees
	fateAbsent    // ...that no final read sees
)

// finals are the final reads: the ok reads invoked after the last
// nemesis event (the heal) and after the last write was invoked, so that
// nothing the run did to the store can come after them; in order of
// invocation. byValue lists, for each key and integer read, the positions
// in list of the reads that returned it.
type finals struct {
	list    []*readOf
	byKey   map[int64][]int // positions in list, by key (lin-kv)
	byValue map[[2]int64][]int
	cutoff  int // the event after which a read is final
}

func finalReads(h *history.History, ws []*written, rs []*readOf, kv bool) *finals {
	f := &finals{byKey: map[int64][]int{}, byValue: map[[2]int64][]int{}, cutoff: -1}
	for i := range h.Events {
		if h.Events[i].Kind == history.KindNemesis {
			f.cutoff = i
		}
	}
	for _, w := range ws {
		f.cutoff = max(f.cutoff, w.invoke)
	}
	for _, r := range rs {
		if r.invoke <= f.cutoff {
			continue
		}
		k := r.key
		if !kv {
			k = 0
		}
		at := len(f.list)
		f.list = append(f.list, r)
		f.byKey[k] = append(f.byKey[k], at)
		for _, v := range r.values {
			key := [2]int64{k, v}
			if l := f.byValue[key]; len(l) == 0 || l[len(l)-1] != at { // a value read twice in one read counts once
				f.byValue[key] = append(l, at)
			}
		}
	}
	return f
}

// after counts the final reads of key invoked after event i, and those of
// them that returned v.
func (f *finals) after(key, v int64, i int) (reads, saw int) {
	first := func(l []int) int {
		return sort.Search(len(l), func(j int) bool { return f.list[l[j]].invoke > i })
	}
	all, with := f.byKey[key], f.byValue[[2]int64{key, v}]
	return len(all) - first(all), len(with) - first(with)
}

// lostWrites: every acknowledged write that the final reads could see is
// there (see the package documentation).
func lostWrites(h *history.History) Result {
	ws, rs, kv, bad, why := writesOf(h)
	what, noun := "set", "add"
	if kv {
		what, noun = "lin-kv", "write"
	}
	if bad != nil {
		return Result{
			Valid:       Unknown,
			Explanation: fmt.Sprintf("event %d is a %s %s whose value is not in the %s workload's form (%s), so the history cannot be judged", bad.Index, bad.F, bad.Type, what, why),
			Evidence:    []history.Event{*bad},
		}
	}
	if len(ws) == 0 {
		return Result{Valid: Unknown, Explanation: "the history has no add, write or cas, so no write can have been lost; run a set or lin-kv workload"}
	}
	f := finalReads(h, ws, rs, kv)
	lw := judgeWrites(h, ws, f, kv)
	r := Result{Figures: lw.figures(what)}
	counts := lw.countsText(noun)
	switch {
	case len(f.list) == 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("no read of %s returned after the last nemesis event and the last %s (event %d, at %s), so nothing shows what the store held in the end; give the workload final reads (final_reads) and a recovery window long enough for them",
			map[bool]string{false: "the whole set", true: "a key"}[kv], noun, f.cutoff, fmtTime(h.Events[f.cutoff].Time))
		return r
	case lw.n[fateLost] > 0:
		r.Valid = False
		lw.explainLost(h, &r, f, noun, counts)
		if n := lw.n[fateDivergent]; n > 0 {
			r.Explanation += fmt.Sprintf("; and the replicas disagree: %s missing from some final reads and present in others", plural(n, "more acknowledged "+noun)+" "+isAre(n, "is", "are"))
		}
		return r
	case len(lw.unexpected) > 0:
		r.Valid = False
		u := lw.unexpected[0]
		r.Explanation = fmt.Sprintf("%s read %s that no %s ever wrote (%d such %s); %s",
			u.read.describe(kv), u.text, noun, len(lw.unexpected), isAre(len(lw.unexpected), "value", "values"), counts)
		r.Evidence = []history.Event{h.Events[u.read.invoke], h.Events[u.read.done]}
		r.Nodes = []string{u.read.node}
		return r
	}
	if lw.n[fateDivergent] > 0 {
		r.Valid = False
		lw.explainDivergent(h, &r, f, noun, counts)
		return r
	}
	acked := lw.acked()
	judged := acked - lw.n[fateUnjudged]
	switch {
	case acked == 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("no %s was acknowledged, so none can have been lost; %s", noun, counts)
	case judged == 0:
		r.Valid = Unknown
		r.Explanation = fmt.Sprintf("every acknowledged %s was acknowledged after the final reads that could see it had begun, so none can be judged; %s", noun, counts)
	default:
		r.Valid = True
		r.Explanation = fmt.Sprintf("no acknowledged %s is lost: %s", noun, counts)
	}
	return r
}

// lostJudgement is what judgeWrites found.
type lostJudgement struct {
	n          map[fate]int
	failedSeen int // recovered writes whose failure was definite
	lost       []*written
	divergent  []*written
	unexpected []unexpectedRead
	byNode     map[string]int // lost writes by the node that acknowledged them
	finalReads int
	windows    []lostWindow
	kv         bool
}

type unexpectedRead struct {
	read *readOf
	text string
}

// judgeWrites gives every write its fate against the final reads.
func judgeWrites(h *history.History, ws []*written, f *finals, kv bool) *lostJudgement {
	lw := &lostJudgement{n: map[fate]int{}, byNode: map[string]int{}, finalReads: len(f.list), kv: kv}
	keyOf := func(w *written) int64 {
		if kv {
			return w.key
		}
		return 0
	}
	// What a lin-kv write needs to know of the others of its key: may one
	// of them have come after it? One that was not acknowledged (and did
	// not fail) may have taken effect at any time after its invocation; an
	// acknowledged one may come after it unless it returned before it was
	// invoked. The two latest returns of acknowledged writes are kept, so
	// that a write can leave itself out.
	type keyWrites struct {
		unacked      int
		late1, late2 int // the latest and second latest done of acknowledged writes
		late1w       *written
	}
	others := map[int64]*keyWrites{}
	wrote := map[[2]int64]map[string]bool{} // key and value -> outcomes of the writes of it
	for _, w := range ws {
		k := keyOf(w)
		kw := others[k]
		if kw == nil {
			kw = &keyWrites{late1: -1, late2: -1}
			others[k] = kw
		}
		out := w.outcome(h)
		switch out {
		case history.OpOK:
			switch {
			case w.done > kw.late1:
				kw.late2, kw.late1, kw.late1w = kw.late1, w.done, w
			case w.done > kw.late2:
				kw.late2 = w.done
			}
		case history.OpFail:
		default:
			kw.unacked++
		}
		kval := [2]int64{k, w.value}
		if wrote[kval] == nil {
			wrote[kval] = map[string]bool{}
		}
		wrote[kval][out] = true
	}
	overwritable := func(w *written) bool {
		kw := others[w.key]
		late := kw.late1
		if kw.late1w == w {
			late = kw.late2
		}
		return kw.unacked > 0 || late > w.invoke
	}
	seenAny := func(w *written) bool {
		_, saw := f.after(keyOf(w), w.value, -1)
		return saw > 0
	}
	for _, w := range ws {
		var fa fate
		switch w.outcome(h) {
		case history.OpOK:
			reads, saw := f.after(keyOf(w), w.value, w.done)
			switch {
			case reads == 0:
				fa = fateUnjudged
			case saw == reads:
				fa = fatePresent
			case kv && overwritable(w) && saw > 0:
				fa = fatePresent
			case kv && overwritable(w):
				fa = fateOverwritten
			case saw == 0:
				fa = fateLost
				lw.lost = append(lw.lost, w)
				lw.byNode[w.node]++
			default:
				fa = fateDivergent
				lw.divergent = append(lw.divergent, w)
			}
		case history.OpFail:
			fa = fateAbsent
			if seenAny(w) && !wrote[[2]int64{keyOf(w), w.value}][history.OpOK] {
				fa = fateRecovered
				lw.failedSeen++
			}
		default:
			fa = fateAbsent
			if seenAny(w) && !wrote[[2]int64{keyOf(w), w.value}][history.OpOK] {
				fa = fateRecovered
			}
		}
		lw.n[fa]++
	}
	// What the final reads returned that nothing wrote, each value once
	// (with the first read that returned it).
	seen := map[string]bool{}
	unexpected := func(r *readOf, k int64, text string) {
		if id := strconv.FormatInt(k, 10) + " " + text; !seen[id] {
			seen[id] = true
			lw.unexpected = append(lw.unexpected, unexpectedRead{r, text})
		}
	}
	for _, r := range f.list {
		k := r.key
		if !kv {
			k = 0
		}
		for _, v := range r.values {
			if wrote[[2]int64{k, v}] == nil {
				unexpected(r, k, strconv.FormatInt(v, 10))
			}
		}
		for _, o := range r.others {
			unexpected(r, k, strconv.Quote(o))
		}
	}
	// The lost and divergent writes in the order they were acknowledged.
	byAck := func(a, b *written) int { return cmp.Compare(a.done, b.done) }
	slices.SortFunc(lw.lost, byAck)
	slices.SortFunc(lw.divergent, byAck)
	lw.windows = windowsOf(h, lw.lost)
	return lw
}

func (lw *lostJudgement) acked() int {
	return lw.n[fatePresent] + lw.n[fateLost] + lw.n[fateDivergent] + lw.n[fateOverwritten] + lw.n[fateUnjudged]
}

// countsText is every count, for a sentence (and so for the message of a
// JUnit failure): "counts (312 adds, 3 final reads): acknowledged and
// lost 47, acknowledged and present 253, …".
func (lw *lostJudgement) countsText(noun string) string {
	total := lw.acked() + lw.n[fateRecovered] + lw.n[fateAbsent]
	s := fmt.Sprintf("counts (%s, %s): acknowledged and lost %d, acknowledged and present %d, unacknowledged and present (recovered) %d",
		plural(total, noun), plural(lw.finalReads, "final read"), lw.n[fateLost], lw.n[fatePresent], lw.n[fateRecovered])
	if lw.failedSeen > 0 {
		s += fmt.Sprintf(" (%d of them after a definite failure)", lw.failedSeen)
	}
	s += fmt.Sprintf(", unacknowledged and absent %d", lw.n[fateAbsent])
	for _, c := range []struct {
		what string
		n    int
	}{
		{"acknowledged and missing from some final reads only", lw.n[fateDivergent]},
		{"acknowledged and overwritten", lw.n[fateOverwritten]},
		{"acknowledged after the final reads began", lw.n[fateUnjudged]},
		{"read but never written", len(lw.unexpected)},
	} {
		if c.n > 0 {
			s += fmt.Sprintf(", %s %d", c.what, c.n)
		}
	}
	return s
}

// figures are the counts, the lost writes named and their windows.
func (lw *lostJudgement) figures(what string) map[string]any {
	fig := map[string]any{
		"workload":                 what,
		"final_reads":              lw.finalReads,
		"acknowledged":             lw.acked(),
		"acknowledged_lost":        lw.n[fateLost],
		"acknowledged_present":     lw.n[fatePresent],
		"acknowledged_divergent":   lw.n[fateDivergent],
		"unjudged":                 lw.n[fateUnjudged],
		"unacknowledged_present":   lw.n[fateRecovered],
		"recovered":                lw.n[fateRecovered],
		"failed_present":           lw.failedSeen,
		"unacknowledged_absent":    lw.n[fateAbsent],
		"unexpected":               len(lw.unexpected),
		"lost_windows":             lw.windows,
		"lost_by_node":             lw.byNode,
		"acknowledged_overwritten": lw.n[fateOverwritten],
	}
	if !lw.kv {
		delete(fig, "acknowledged_overwritten")
	}
	named := make([]lostNamed, 0, min(len(lw.lost), MaxLostNamed))
	for _, w := range lw.lost[:min(len(lw.lost), MaxLostNamed)] {
		n := lostNamed{Process: w.process, Node: w.node, Value: w.value}
		if lw.kv {
			k := w.key
			n.Key = &k
		}
		named = append(named, n)
	}
	fig["lost"] = named
	return fig
}

// lostNamed is one lost write, as the figures name it.
type lostNamed struct {
	// Key is the lin-kv key (none for a set); Value the element, or the
	// value written.
	Key     *int64 `json:"key,omitempty"`
	Value   int64  `json:"value"`
	Process string `json:"process"`
	Node    string `json:"node"`
}

// lostWindow is a stretch of time in which lost writes were
// acknowledged, none further than LostWindowGap from the next.
type lostWindow struct {
	From  int64  `json:"from_ns"`
	To    int64  `json:"to_ns"`
	Lost  int    `json:"lost"`
	Nodes string `json:"nodes"`
	// Faults are the nemesis's faults in force during the window, or
	// begun within LostWindowGap after it (a crash that loses what was
	// just acknowledged).
	Faults string `json:"faults,omitempty"`
}

// windowsOf groups the lost writes by when they were acknowledged.
func windowsOf(h *history.History, lost []*written) []lostWindow {
	if len(lost) == 0 {
		return []lostWindow{}
	}
	var out []lostWindow
	var nodes map[string]bool
	flush := func() {
		w := &out[len(out)-1]
		w.Nodes = strings.Join(slices.Sorted(maps.Keys(nodes)), ", ")
		w.Faults = faultsDuring(h, w.From, w.To+LostWindowGap)
	}
	for _, w := range lost { // in the order they were acknowledged
		t := h.Events[w.done].Time
		if len(out) == 0 || t-out[len(out)-1].To > LostWindowGap {
			if len(out) > 0 {
				flush()
			}
			out = append(out, lostWindow{From: t, To: t})
			nodes = map[string]bool{}
		}
		cur := &out[len(out)-1]
		cur.To, cur.Lost = t, cur.Lost+1
		nodes[w.node] = true
	}
	flush()
	if len(out) > maxLostWindows {
		rest := out[maxLostWindows-1:]
		last := lostWindow{From: rest[0].From, To: rest[len(rest)-1].To, Nodes: "…", Faults: fmt.Sprintf("%d more windows", len(rest))}
		for _, w := range rest {
			last.Lost += w.Lost
		}
		out = append(out[:maxLostWindows-1], last)
	}
	return out
}

// faultsDuring names the nemesis's faults in force at some moment of
// [from, to]: a fault lasts from its start event to the end event of the
// same name (or of the same kind and nodes, for a history without
// names); one with no end is an instant.
func faultsDuring(h *history.History, from, to int64) string {
	type fault struct {
		start, end int64
		text       string
	}
	var list []*fault
	open := map[string]*fault{}
	idOf := func(e *history.Event) string {
		if e.Name != "" {
			return e.Name
		}
		return e.What + " " + strings.Join(e.Nodes, ",")
	}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindNemesis {
			continue
		}
		id := idOf(e)
		if e.Phase == history.PhaseEnd {
			if f := open[id]; f != nil {
				f.end = e.Time
				delete(open, id)
			}
			continue
		}
		text := e.What
		if len(e.Nodes) > 0 {
			text += " " + strings.Join(e.Nodes, ",")
		}
		if e.Detail != "" {
			text += ": " + e.Detail
		}
		if e.Name != "" {
			text = e.Name + " (" + text + ")"
		}
		f := &fault{start: e.Time, end: e.Time, text: text}
		list = append(list, f)
		open[id] = f
	}
	for _, f := range open {
		f.end = history.MaxTime // in force until the end
	}
	var names []string
	for _, f := range list {
		if f.start <= to && f.end >= from && !slices.Contains(names, f.text) {
			names = append(names, f.text)
		}
	}
	const most = 6
	if len(names) > most {
		names = append(names[:most-1:most-1], fmt.Sprintf("%d more", len(names)-(most-1)))
	}
	return strings.Join(names, ", ")
}

// explainLost writes the sentence and evidence of a history with lost
// writes.
func (lw *lostJudgement) explainLost(h *history.History, r *Result, f *finals, noun, counts string) {
	n, acked := lw.n[fateLost], lw.acked()
	first, last := lw.windows[0].From, lw.windows[len(lw.windows)-1].To
	var named []string
	for _, w := range lw.lost[:min(len(lw.lost), MaxLostNamed)] {
		named = append(named, w.name(lw.kv))
	}
	list := strings.Join(named, ", ")
	if n > len(named) {
		list += fmt.Sprintf(" and %d more", n-len(named))
	}
	window := func(w lostWindow) string {
		s := "at " + fmtTime(w.From)
		if w.To > w.From {
			s = fmtSpan(w.From, w.To, "")
		}
		s += " by " + w.Nodes
		if w.Faults != "" {
			s += ", while " + w.Faults
		}
		return s
	}
	when := window(lw.windows[0])
	if len(lw.windows) > 1 {
		var ws []string
		for _, w := range lw.windows[:min(len(lw.windows), 3)] {
			ws = append(ws, fmt.Sprintf("%d %s", w.Lost, window(w)))
		}
		if len(lw.windows) > 3 {
			ws = append(ws, fmt.Sprintf("%d more windows", len(lw.windows)-3))
		}
		when = fmt.Sprintf("in %d windows: %s", len(lw.windows), strings.Join(ws, "; "))
	}
	why := "no final read invoked after its acknowledgement has it"
	if lw.kv {
		why = "no final read of its key invoked after its acknowledgement has its value, and no other write of the key may have come after it"
	}
	r.Explanation = fmt.Sprintf("%d of %s %s lost (%s), acknowledged %s; lost: %s; %s",
		n, plural(acked, "acknowledged "+noun), isAre(n, "is", "are"), why, when, list, counts)
	w := lw.lost[0]
	r.Evidence = []history.Event{h.Events[w.invoke], h.Events[w.done]}
	key := int64(0)
	if lw.kv {
		key = w.key
	}
	for _, at := range f.byKey[key] { // the first final read that should have had it
		if rd := f.list[at]; rd.invoke > w.done {
			r.Evidence = append(r.Evidence, h.Events[rd.invoke], h.Events[rd.done])
			break
		}
	}
	sortEvents(r.Evidence)
	r.Nodes = slices.Sorted(maps.Keys(lw.byNode))
	r.Interval = &Interval{From: first, To: last}
}

// explainDivergent writes the sentence and evidence of a history whose
// final reads disagree: acknowledged writes that no read lost entirely
// but some final reads after their acknowledgement lack while others
// have them. The replicas (or the members the reads were served by) did
// not converge after the heal: a finding of its own, whatever else the
// store kept. The evidence is the first such write and two final reads
// of it, one with it and one without; the nodes are those that served a
// final read lacking some divergent write.
func (lw *lostJudgement) explainDivergent(h *history.History, r *Result, f *finals, noun, counts string) {
	n := lw.n[fateDivergent]
	w := lw.divergent[0]
	key := int64(0)
	if lw.kv {
		key = w.key
	}
	var with, without *readOf
	for _, at := range f.byKey[key] {
		rd := f.list[at]
		if rd.invoke <= w.done {
			continue
		}
		switch has := slices.Contains(rd.values, w.value); {
		case has && with == nil:
			with = rd
		case !has && without == nil:
			without = rd
		}
	}
	lacking := map[string]bool{}
	for _, d := range lw.divergent {
		k := int64(0)
		if lw.kv {
			k = d.key
		}
		for _, at := range f.byKey[k] {
			if rd := f.list[at]; rd.invoke > d.done && !slices.Contains(rd.values, d.value) {
				lacking[rd.node] = true
			}
		}
	}
	var named []string
	for _, d := range lw.divergent[:min(len(lw.divergent), MaxLostNamed)] {
		named = append(named, d.name(lw.kv))
	}
	list := strings.Join(named, ", ")
	if n > len(named) {
		list += fmt.Sprintf(" and %d more", n-len(named))
	}
	r.Nodes = slices.Sorted(maps.Keys(lacking))
	r.Explanation = fmt.Sprintf("the replicas disagree: %d of %s %s missing from some final reads and present in others (at %s, those reads lack them); %s, acknowledged at %s, is in %s and missing from %s; missing from some: %s; %s",
		n, plural(lw.acked(), "acknowledged "+noun), isAre(n, "is", "are"), joinNames(r.Nodes), w.describe(lw.kv), fmtTime(h.Events[w.done].Time),
		with.describe(lw.kv), without.describe(lw.kv), list, counts)
	r.Evidence = []history.Event{h.Events[w.invoke], h.Events[w.done], h.Events[with.invoke], h.Events[with.done], h.Events[without.invoke], h.Events[without.done]}
	sortEvents(r.Evidence)
	first, last := h.Events[lw.divergent[0].done].Time, h.Events[lw.divergent[len(lw.divergent)-1].done].Time
	r.Interval = &Interval{From: first, To: last}
}

// name is a lost write for a sentence: "17" (a set's element) or "key 2 =
// 17".
func (w *written) name(kv bool) string {
	if kv {
		return fmt.Sprintf("key %d = %d", w.key, w.value)
	}
	return strconv.FormatInt(w.value, 10)
}

// describe names a write for a sentence.
func (w *written) describe(kv bool) string {
	if kv {
		return fmt.Sprintf("%s's %s of %d to key %d at %s", w.process, w.f, w.value, w.key, w.node)
	}
	return fmt.Sprintf("%s's add of %d at %s", w.process, w.value, w.node)
}

// describe names a read for a sentence.
func (r *readOf) describe(kv bool) string {
	if kv {
		return fmt.Sprintf("%s's final read of key %d at %s", r.process, r.key, r.node)
	}
	return fmt.Sprintf("%s's final read of the set at %s", r.process, r.node)
}
