package checks

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/coupharness/coup/history"
)

// benchHistory returns a history of about n events from a cluster of 16
// nodes that elect again and again: elect requests, rings of election and
// elected messages with every delivery, participant and leader reports
// (each round in a new term), heartbeats, crashes and restarts under the same id, pauses, nemesis
// events, and now and then a corrupted message that its receiver rejects.
// It is built once per size and shared by the benchmarks.
func benchHistory(n int) *history.History {
	benchMu.Lock()
	defer benchMu.Unlock()
	if h, ok := benchCache[n]; ok {
		return h
	}
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	const size = 16
	names := make([]string, size)
	ids := make([]int, size)
	for i := range names {
		names[i] = "n" + strconv.Itoa(i+1)
		ids[i] = i + 1
	}
	meta := &history.Meta{
		Scenario: "bench", Algorithm: "bench", Nodes: names, IDs: ids, Elects: "max",
		Termination: 50e6, Stabilisation: 1e9, GST: 1e6, MessageBound: 1 << 20, Checksums: true,
	}
	events := make([]history.Event, 0, n+2*size+8)
	t := int64(0)
	add := func(e history.Event) {
		t += 1 + rng.Int64N(20_000)
		e.Index, e.Time = int64(len(events)), t
		events = append(events, e)
	}
	add(history.Event{Kind: history.KindMeta, Meta: meta})
	live := make([]bool, size)
	inc := make([]int, size)
	start := func(i int) {
		inc[i]++
		live[i] = true
		add(history.Event{Kind: history.KindProcess, Node: names[i], What: history.ProcStart, Incarnation: inc[i]})
	}
	for i := range names {
		start(i)
	}
	msg := int64(0)
	send := func(src, dest int, mtype string, corrupt bool) {
		msg++
		add(history.Event{Kind: history.KindMsg, What: history.MsgSend, Msg: msg, Src: names[src], Dest: names[dest], MType: mtype})
		if corrupt {
			add(history.Event{Kind: history.KindMsg, What: history.MsgCorrupt, Msg: msg, Src: names[src], Dest: names[dest], MType: mtype, Body: `{"type":"` + mtype + `","id":0}`})
		}
		if !live[dest] {
			add(history.Event{Kind: history.KindMsg, What: history.MsgDrop, Msg: msg, Src: names[src], Dest: names[dest], MType: mtype, Reason: "down"})
			return
		}
		add(history.Event{Kind: history.KindMsg, What: history.MsgDeliver, Msg: msg, Src: names[src], Dest: names[dest], MType: mtype})
		if corrupt {
			add(history.Event{Kind: history.KindReport, Node: names[dest], What: history.ReportRejected, Value: "checksum", Msg: msg})
		}
	}
	report := func(i int, what, value string) {
		add(history.Event{Kind: history.KindReport, Node: names[i], What: what, Value: value})
	}
	nextLive := func(i int) int {
		for k := 1; k <= size; k++ {
			if j := (i + k) % size; live[j] {
				return j
			}
		}
		return i
	}
	final := false
	term := int64(0) // each election round is a new term
	for !final {
		final = len(events) >= n-6*size
		switch x := rng.IntN(20); {
		case final || x < 12: // an election round on the ring of live nodes
			var ring []int
			for i := range names {
				if live[i] {
					ring = append(ring, i)
				}
			}
			if len(ring) == 0 {
				start(rng.IntN(size))
				final = false
				continue
			}
			init := ring[rng.IntN(len(ring))]
			add(history.Event{Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: "elect", Node: names[init]})
			best := ring[len(ring)-1]
			for i := init; ; i = nextLive(i) {
				report(i, history.ReportParticipant, "true")
				send(i, nextLive(i), "election", rng.IntN(200) == 0)
				if nextLive(i) == init {
					break
				}
			}
			term++
			round := term // each report points at its own copy
			for i := best; ; i = nextLive(i) {
				add(history.Event{Kind: history.KindReport, Node: names[i], What: history.ReportLeader, Value: names[best], Term: &round})
				send(i, nextLive(i), "elected", false)
				if nextLive(i) == best {
					break
				}
			}
		case x < 16: // heartbeats from a node to all
			src := rng.IntN(size)
			if !live[src] {
				continue
			}
			for d := range names {
				if d != src {
					send(src, d, "ping", false)
				}
			}
		case x < 18: // a crash, or a restart under the same id
			i := rng.IntN(size)
			add(history.Event{Kind: history.KindNemesis, What: "crash", Phase: history.PhaseStart, Nodes: []string{names[i]}})
			if live[i] {
				live[i] = false
				add(history.Event{Kind: history.KindProcess, Node: names[i], What: history.ProcCrash, Incarnation: inc[i]})
			} else {
				start(i)
			}
		default: // a pause and a resume
			i := rng.IntN(size)
			if live[i] {
				add(history.Event{Kind: history.KindProcess, Node: names[i], What: history.ProcPause, Incarnation: inc[i]})
				add(history.Event{Kind: history.KindProcess, Node: names[i], What: history.ProcResume, Incarnation: inc[i]})
			}
		}
	}
	// The last election settles within the bounds, and the run goes on
	// quietly long enough for them to pass.
	meta.Stabilisation = t
	t += 2 * meta.Termination
	for i := range names {
		if live[i] {
			add(history.Event{Kind: history.KindProcess, Node: names[i], What: history.ProcStop, Incarnation: inc[i]})
		}
	}
	add(history.Event{Kind: history.KindEnd, Counts: map[string]int64{"messages.sent": msg}})
	h, err := history.FromEvents(events)
	if err != nil {
		panic(err)
	}
	benchCache[n] = h
	return h
}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*history.History{}
)

// BenchmarkChecks runs each check, and every check together, on histories
// of 10⁴, 10⁵ and 10⁶ events and reports events per second.
func BenchmarkChecks(b *testing.B) {
	var all []string
	for _, c := range electionChecks() {
		all = append(all, c.Name)
	}
	for _, n := range []int{1e4, 1e5, 1e6} {
		h := benchHistory(n)
		events := float64(len(h.Events))
		for _, c := range electionChecks() {
			b.Run(fmt.Sprintf("%s/%d", c.Name, n), func(b *testing.B) {
				for b.Loop() {
					c.Run(h)
				}
				b.ReportMetric(events*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
		b.Run(fmt.Sprintf("all/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := Run(h, all); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(events*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// The benchmark's history must be judged, not refused: its verdicts are
// what a long healthy run gives.
func TestBenchHistory(t *testing.T) {
	h := benchHistory(1e4)
	var all []string
	for _, c := range electionChecks() {
		all = append(all, c.Name)
	}
	rs, _, err := Run(h, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Valid != True {
			t.Errorf("%s: got %v (%s), want true", r.Name, r.Valid, r.Explanation)
		}
	}
}
