package sim

// The fault model in the simulator: each test runs a short scenario,
// mostly with the flood test algorithm (every node pings every other at
// each tick), and reads in the history what the fault did, as the real
// harness's fault tests do with processes.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nodes/flood"
)

// No message crosses a partition while it lasts; it is dropped as such.
func TestPartition(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "300ms", "", `[[faults]]
kind = "partition"
shape = "isolate"
target = "n1"
at = "100ms"
for = "100ms"
`))
	l := messages(h)
	start, end := nemesisEvent(t, h, "partition", history.PhaseStart), nemesisEvent(t, h, "partition", history.PhaseEnd)
	cut, through := 0, 0
	for _, id := range l.ids {
		s := l.send[id]
		if s.Index < start.Index || s.Index > end.Index {
			continue
		}
		if s.Src == "n1" || s.Dest == "n1" {
			cut++
			if len(l.delivers[id]) > 0 || len(l.drops[id]) != 1 || l.drops[id][0].Reason != "partition" {
				t.Errorf("message %d %s→%s: delivered %d times, drops %v; want one partition drop", id, s.Src, s.Dest, len(l.delivers[id]), l.drops[id])
			}
		} else if len(l.delivers[id]) == 1 {
			through++
		}
	}
	if cut < 20 || through < 10 {
		t.Errorf("%d messages cut and %d through: too few to judge", cut, through)
	}
}

// Over many messages the loss rate is within four standard deviations of
// the configured probability.
func TestLossRate(t *testing.T) {
	const p = 0.3
	_, h := simulate(t, floodScenario(4, "2ms", "2s", "", fmt.Sprintf("[[faults]]\nkind = \"loss\"\nprobability = %g\n", p)))
	l := messages(h)
	lost, total := 0, 0
	for _, id := range l.ids {
		if l.send[id].Time >= int64(2*time.Second) {
			continue
		}
		total++
		if d := l.drops[id]; len(d) == 1 && d[0].Reason == "loss" {
			lost++
		}
	}
	got, sigma := float64(lost)/float64(total), math.Sqrt(p*(1-p)/float64(total))
	if total < 5000 || math.Abs(got-p) > 4*sigma {
		t.Errorf("observed loss %.4f over %d messages, want %g ± %.4f", got, total, p, 4*sigma)
	}
}

// Duplicated messages arrive twice; a delay fault reorders a link that is
// otherwise FIFO.
func TestDuplicateAndDelay(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "4ms", "500ms", "", `[[faults]]
kind = "duplicate"
target = "n1"
direction = "out"
at = "100ms"
for = "250ms"

[[faults]]
kind = "delay"
target = "n2"
direction = "out"
jitter = "15ms"
distribution = "exponential"
at = "100ms"
for = "250ms"
`))
	l := messages(h)
	start, end := nemesisEvent(t, h, "duplicate", history.PhaseStart), nemesisEvent(t, h, "duplicate", history.PhaseEnd)
	twice := 0
	for _, id := range l.ids {
		s := l.send[id]
		if s.Index < start.Index || s.Index > end.Index || s.Src != "n1" {
			continue
		}
		twice++
		if len(l.delivers[id]) != 2 || l.dups[id] != 1 {
			t.Errorf("message %d delivered %d times with %d duplicate events, want 2 and 1", id, len(l.delivers[id]), l.dups[id])
		}
	}
	inversions := map[string]int{}
	last := map[string]int64{}
	for _, e := range h.Events {
		if e.Kind == history.KindMsg && e.What == history.MsgDeliver {
			link := e.Src + ">" + e.Dest
			if e.Msg < last[link] {
				inversions[e.Src]++
			}
			last[link] = max(last[link], e.Msg)
		}
	}
	if twice < 20 || inversions["n2"] == 0 || inversions["n1"]+inversions["n3"] != 0 {
		t.Errorf("%d duplicated; reorderings by sender %v: want many duplicates, and reordering out of n2 only", twice, inversions)
	}
}

// A corrupted message is rejected by a receiver that checks sums, with a
// report naming it, and never acted on; with checksums off, a mutated
// message that still decodes is acted on, and the integrity check says so.
func TestCorruption(t *testing.T) {
	tests := []struct {
		name, top, mode string
		acted           bool
	}{
		{"bit flips, checksums on", "", "bitflip", false},
		{"mutations, checksums on", "", "mutate", false},
		{"mutations, checksums off", "checksums = false", "mutate", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, h := simulate(t, floodScenario(3, "5ms", "300ms", tt.top+"\n[checks]\nrun = [\"integrity\"]\n", fmt.Sprintf(`[[faults]]
kind = "corrupt"
mode = %q
probability = 0.5
target = "n1"
direction = "out"
at = "50ms"
for = "200ms"
`, tt.mode)))
			l := messages(h)
			rejected := map[int64]string{}
			mismatches := 0
			for _, e := range h.Events {
				switch {
				case e.Kind == history.KindReport && e.What == history.ReportRejected:
					rejected[e.Msg] = e.Value
				case e.Kind == history.KindReport && e.Name == flood.MetricMismatch:
					mismatches++
				}
			}
			corrupted := 0
			for id, cs := range l.corrupts {
				corrupted += len(cs)
				if cs[0].Src != "n1" || cs[0].Reason != tt.mode || cs[0].Body == "" {
					t.Errorf("corrupt event %+v: want from n1, reason %s, with the body", cs[0], tt.mode)
				}
				if !tt.acted && rejected[id] == "" {
					t.Errorf("message %d was corrupted and not rejected", id)
				}
			}
			if corrupted < 20 {
				t.Fatalf("only %d corrupted deliveries", corrupted)
			}
			integrity := res.Checks["integrity"].Valid
			switch {
			case tt.acted && (mismatches == 0 || integrity != checks.False):
				t.Errorf("checksums off: %d payload mismatches, integrity %s; want mismatches and a violation", mismatches, integrity)
			case !tt.acted && (mismatches != 0 || integrity != checks.True):
				t.Errorf("checksums on: %d payload mismatches, integrity %s; want none and valid", mismatches, integrity)
			}
		})
	}
}

// A joker alters a payload and redoes the sum: the checksum passes, and
// only the end-to-end check of the payload catches it.
func TestJoker(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "200ms", "", `[[faults]]
kind = "joker"
target = "n1"
at = "50ms"
for = "100ms"
`))
	rejected, mismatches := 0, 0
	for _, e := range h.Events {
		switch {
		case e.Kind == history.KindReport && e.What == history.ReportRejected:
			rejected++
		case e.Kind == history.KindReport && e.Name == flood.MetricMismatch:
			mismatches++
		}
	}
	if rejected != 0 || mismatches < 10 {
		t.Errorf("%d rejected, %d payload mismatches; want none rejected and many mismatches", rejected, mismatches)
	}
}

// A paused node receives nothing and its timers do not fire until it is
// resumed; then its expired timer fires, and what arrived meanwhile is
// delivered, at the resume.
func TestPause(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "300ms", "", `[[faults]]
kind = "pause"
target = "n2"
at = "100ms"
for = "100ms"
`))
	var pause, resume *history.Event
	lastRound, firstRoundAfter, heldDelivered := 0, 0, 0
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindProcess && e.Node == "n2" && e.What == history.ProcPause:
			pause = e
			continue
		case e.Kind == history.KindProcess && e.Node == "n2" && e.What == history.ProcResume:
			resume = e
			continue
		}
		involves := e.Node == "n2" || (e.Kind == history.KindMsg && e.What == history.MsgSend && e.Src == "n2") ||
			(e.Kind == history.KindMsg && e.What == history.MsgDeliver && e.Dest == "n2")
		if pause != nil && resume == nil && involves {
			t.Errorf("while n2 was paused: %+v", *e)
		}
		round := 0
		if e.Kind == history.KindReport && e.Node == "n2" && e.Name == flood.MetricRound {
			round, _ = strconv.Atoi(e.Value)
		}
		switch {
		case pause == nil && round > 0:
			lastRound = round
		case resume != nil && round > 0 && firstRoundAfter == 0:
			firstRoundAfter = round
			if e.Time != resume.Time {
				t.Errorf("the tick that expired during the pause fired at %s, want at the resume %s", e.Duration(), resume.Duration())
			}
		}
		if resume != nil && e.Time == resume.Time && e.Kind == history.KindMsg && e.What == history.MsgDeliver && e.Dest == "n2" {
			heldDelivered++
		}
	}
	if pause == nil || resume == nil || resume.Time-pause.Time != int64(100*time.Millisecond) {
		t.Fatalf("pause %v, resume %v: want 100ms apart", pause, resume)
	}
	if firstRoundAfter != lastRound+1 {
		t.Errorf("n2 was at round %d before the pause and %d after: it should go on", lastRound, firstRoundAfter)
	}
	if heldDelivered < 20 {
		t.Errorf("only %d messages held during the pause were delivered at the resume", heldDelivered)
	}
}

// A replaced node has the same id and fresh state, comes up after a
// restart time within the configured span, and what reaches it meanwhile
// is dropped as undeliverable.
func TestReplace(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "2ms", "300ms", "", `[[faults]]
kind = "replace"
target = "n1"
at = "100ms"
`))
	evs := processEvents(h, "n1")
	got := []string{}
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s %d", e.What, e.Incarnation))
	}
	if want := []string{"start 1", "crash 1", "start 2", "stop 2"}; !slices.Equal(got, want) {
		t.Fatalf("n1's process events %v, want %v", got, want)
	}
	crash, start := evs[1], evs[2]
	if down := time.Duration(start.Time - crash.Time); down < DefaultRestart.Min || down >= DefaultRestart.Max {
		t.Errorf("n1 was down %s, want within [%s, %s)", down, DefaultRestart.Min, DefaultRestart.Max)
	}
	firstRound, downDrops := "", 0
	for _, e := range h.Events {
		switch {
		case e.Index > start.Index && firstRound == "" && e.Kind == history.KindReport && e.Node == "n1" && e.Name == flood.MetricRound:
			firstRound = e.Value
		case e.Kind == history.KindMsg && e.What == history.MsgDrop && e.Reason == "down":
			downDrops++
			if e.Dest != "n1" || e.Time < crash.Time || e.Time >= start.Time {
				t.Errorf("drop %+v: want only messages to n1 while it was down", e)
			}
		}
	}
	if firstRound != "1" || downDrops == 0 {
		t.Errorf("after the restart n1 counted round %q first, and %d messages were dropped while it was down; want 1 and some", firstRound, downDrops)
	}
}

// A restart takes time, and the nemesis waits for it as a real driver
// does: replacing every node restarts them one after another.
func TestReplaceAllInTurn(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "200ms", "", `[[faults]]
kind = "replace"
target = "all"
at = "50ms"
`))
	var order []string
	for _, e := range h.Events {
		if e.Kind == history.KindProcess && e.Time > 0 && (e.What == history.ProcCrash || e.What == history.ProcStart) {
			order = append(order, e.What+" "+e.Node)
		}
	}
	want := []string{"crash n1", "start n1", "crash n2", "start n2", "crash n3", "start n3"}
	if !slices.Equal(order, want) {
		t.Errorf("process events %v, want %v", order, want)
	}
}

// A clock fault makes the node's timers run that many times fast, until it
// ends.
func TestClockRate(t *testing.T) {
	_, h := simulate(t, floodScenario(2, "10ms", "400ms", "", `[[faults]]
kind = "clock"
rate = 2.0
target = "n1"
at = "100ms"
for = "200ms"
`))
	var ticks []int64
	for _, e := range h.Events {
		if e.Kind == history.KindReport && e.Node == "n1" && e.Name == flood.MetricRound {
			ticks = append(ticks, e.Time)
		}
	}
	gaps := map[time.Duration]int{}
	for i := 1; i < len(ticks); i++ {
		gaps[time.Duration(ticks[i]-ticks[i-1])]++
	}
	if gaps[5*time.Millisecond] < 15 || gaps[10*time.Millisecond] < 15 {
		t.Errorf("gaps between n1's ticks %v: want many of 5ms (rate 2) and of 10ms", gaps)
	}
}

// A triggered fault starts at the event it waits for.
func TestTriggeredReplace(t *testing.T) {
	_, h := simulate(t, `algorithm = "chang-roberts"
nodes = 5
duration = "300ms"
recovery = "200ms"

[workload]
initiators = ["n2"]
at = "50ms"

[[faults]]
kind = "replace"
target = "n5"
when = { report = "participant", value = "true", node = "n4" }
`)
	var trigger, replace *history.Event
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case trigger == nil && e.Kind == history.KindReport && e.Node == "n4" && e.What == history.ReportParticipant && e.Value == "true":
			trigger = e
		case e.Kind == history.KindNemesis && e.What == "replace":
			replace = e
		}
	}
	if trigger == nil || replace == nil || replace.Time != trigger.Time || replace.Index < trigger.Index ||
		!strings.Contains(replace.Detail, fmt.Sprintf("event %d", trigger.Index)) {
		t.Fatalf("trigger %+v, replace %+v: want the replace at the trigger's time, naming it", trigger, replace)
	}
}

// At the heal every fault in force ends (a pause is resumed), but a crash
// without a duration is not undone.
func TestHeal(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "200ms", "", `[[faults]]
kind = "pause"
target = "n1"
at = "50ms"

[[faults]]
kind = "crash"
target = "n2"
at = "60ms"
`))
	resume := nemesisEvent(t, h, "pause", history.PhaseEnd)
	if resume.Time != int64(200*time.Millisecond) {
		t.Errorf("the pause ended at %s, want at the heal (200ms)", resume.Duration())
	}
	for _, e := range processEvents(h, "n2") {
		if e.What == history.ProcStart && e.Incarnation > 1 {
			t.Errorf("n2 was restarted: %+v", e)
		}
	}
}

// After the global stabilisation time a timely link delivers every message
// within delta, whatever the loss on it.
func TestTimely(t *testing.T) {
	_, h := simulate(t, floodScenario(3, "5ms", "400ms", "", `[[faults]]
kind = "loss"
probability = 1.0

[[faults]]
kind = "timely"
target = "n1"
direction = "out"
at = "200ms"
delta = "4ms"
`))
	l := messages(h)
	late := 0
	for _, id := range l.ids {
		s := l.send[id]
		if s.Src != "n1" || s.Time < int64(200*time.Millisecond) || s.Time >= int64(400*time.Millisecond) {
			continue
		}
		if len(l.delivers[id]) != 1 || l.delivers[id][0].Time-s.Time > int64(4*time.Millisecond) {
			late++
		}
	}
	if late != 0 {
		t.Errorf("%d messages out of n1 after the GST were lost or later than delta", late)
	}
}
