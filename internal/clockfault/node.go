package clockfault

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// ReadWait bounds how long Set waits for a process to read its clock
// through the hook, so that what it saw can be recorded.
const ReadWait = time.Second

// Node is one node's clocks under clock faults, as a driver keeps them:
// the skew in force, put into each process of the node, those started
// later included (Started), and what each process's reads saw when the
// skew began, to measure its rate when it ends. It is safe for
// concurrent use.
//
// A fault's end (the zero skew) sets the wall clock right, a step as NTP
// makes, and lets the monotonic clocks run at the true rate again from
// where they are: a monotonic clock never goes back (and Go's runtime,
// whose timers wait for it, would stall for as long as it went back).
// What they gained or lost is carried into the next fault.
type Node struct {
	mu      sync.Mutex
	setting *Setting
	fault   string
	first   map[int]Reading
}

// FromNemesis turns a clock fault's skew into the clocks it moves.
func FromNemesis(s nemesis.Skew) Skew {
	return Skew{
		Offset: s.Offset, Rate: s.Rate,
		Realtime:  s.Clocks == nemesis.Realtime || s.Clocks == nemesis.BothClocks || s.Clocks == "",
		Monotonic: s.Clocks == nemesis.Monotonic || s.Clocks == nemesis.BothClocks || s.Clocks == "",
	}
}

// Set puts a clock fault's skew into the node's processes (pids), or
// puts their clocks right when it is zero, and returns the clock events
// of what their reads saw (node left for the driver to fill in). A
// process that ended meanwhile is skipped.
func (n *Node) Set(s nemesis.Skew, pids []int) ([]history.Event, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s.IsZero() {
		return n.reset(s.Fault, pids)
	}
	st := Begin(FromNemesis(s))
	if n.setting != nil {
		st.Carry = n.setting.Carried(st.MonotonicAt)
	}
	n.setting, n.fault, n.first = &st, s.Fault, map[int]Reading{}
	var errs []error
	var applied []int
	for _, pid := range pids {
		if err := Apply(pid, st); err != nil {
			if !errors.Is(err, ErrGone) {
				errs = append(errs, err)
			}
			continue
		}
		applied = append(applied, pid)
	}
	var events []history.Event
	for _, pid := range applied {
		r, err := waitRead(pid, st)
		if err == nil && r.seen(st) {
			n.first[pid] = r
		}
		events = append(events, n.event(pid, r, err, nil, &st))
	}
	return events, errors.Join(errs...)
}

// Started puts the skew in force, if any, into processes of the node that
// have just started (a restart, a sidecar).
func (n *Node) Started(pids []int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.setting == nil {
		return nil
	}
	var errs []error
	for _, pid := range pids {
		if err := Apply(pid, *n.setting); err != nil && !errors.Is(err, ErrGone) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Active reports whether a skew is in force.
func (n *Node) Active() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.setting != nil
}

// reset reads back what each process saw last, then puts its clocks
// right: the wall clock true, the monotonic clocks where they are.
func (n *Node) reset(fault string, pids []int) ([]history.Event, error) {
	st := n.setting
	if fault == "" {
		fault = n.fault
	}
	n.setting = nil
	var keep *Setting
	if st != nil {
		k := Begin(Skew{})
		if k.Carry = st.Carried(k.MonotonicAt); k.Carry != 0 {
			keep = &k
			n.setting = keep
		}
	}
	var events []history.Event
	var errs []error
	for _, pid := range pids {
		if st != nil {
			r, err := Read(pid)
			if errors.Is(err, ErrGone) {
				continue
			}
			if first, ok := n.first[pid]; ok || err != nil || r.seen(*st) {
				e := n.event(pid, r, err, &first, st)
				e.Name = fault
				events = append(events, e)
			}
		}
		var err error
		if keep != nil {
			err = Apply(pid, *keep)
		} else {
			err = Reset(pid)
		}
		if err != nil && !errors.Is(err, ErrGone) {
			errs = append(errs, err)
		}
	}
	if keep != nil && len(events) > 0 {
		events[len(events)-1].Detail += fmt.Sprintf("; the wall clock set right, the monotonic clocks keep their %s (a monotonic clock never goes back)", signed(keep.Carry.Round(time.Millisecond)))
	}
	n.first = nil
	return events, errors.Join(errs...)
}

// waitRead waits, up to ReadWait, for the process's reads to show the
// setting: a read of each clock it moves, after it began.
func waitRead(pid int, st Setting) (Reading, error) {
	deadline := time.Now().Add(ReadWait)
	for {
		r, err := Read(pid)
		if err != nil || !r.Counted || r.seen(st) || time.Now().After(deadline) {
			return r, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// seen reports whether the process has read every clock the setting
// moves since it began.
func (r Reading) seen(st Setting) bool {
	if !r.Counted {
		return false
	}
	return (!st.Realtime || (r.Realtime.Count > 0 && r.Realtime.At >= st.RealtimeAt)) &&
		(!st.Monotonic || (r.Monotonic.Count > 0 && r.Monotonic.At >= st.MonotonicAt))
}

// event says what a reading showed, with the rate measured since first
// when it is given.
func (n *Node) event(pid int, r Reading, err error, first *Reading, st *Setting) history.Event {
	e := history.Event{Kind: history.KindClock, Name: n.fault}
	who := fmt.Sprintf("pid %d (%s)", pid, comm(pid))
	switch {
	case err != nil:
		e.What, e.Detail = history.ClockUnseen, fmt.Sprintf("%s: %v", who, err)
		return e
	case !r.Counted:
		e.What, e.Detail = history.ClockUnseen, who+": the hook is in, but the process had no room to count its reads: its clock is not read back"
		return e
	case r.Realtime.Count == 0 && r.Monotonic.Count == 0:
		e.What, e.Detail = history.ClockUnseen, who+": it read no clock through its vDSO within "+ReadWait.String()+" (a program that makes the system call itself is out of reach)"
		return e
	}
	e.What = history.ClockSeen
	main := r.Realtime
	if st != nil && !st.Realtime || r.Realtime.Count == 0 {
		main = r.Monotonic
	}
	e.Value = signed(time.Duration(main.Skew))
	parts := []string{who}
	for _, c := range []struct {
		name string
		r    Reads
		f    func(Reading) Reads
	}{{"realtime", r.Realtime, func(x Reading) Reads { return x.Realtime }}, {"monotonic", r.Monotonic, func(x Reading) Reads { return x.Monotonic }}} {
		if c.r.Count == 0 {
			continue
		}
		s := fmt.Sprintf("%s %s (%d reads)", c.name, signed(time.Duration(c.r.Skew)), c.r.Count)
		if first != nil && first.Counted {
			if f := c.f(*first); f.Count > 0 && c.r.At > f.At {
				rate := 1 + float64(c.r.Skew-f.Skew)/float64(c.r.At-f.At)
				s += fmt.Sprintf(", rate %.3f over %s", rate, time.Duration(c.r.At-f.At).Round(time.Millisecond))
			}
		}
		parts = append(parts, s)
	}
	e.Detail = strings.Join(parts, "; ")
	return e
}

// signed writes a duration with its sign.
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// comm is a process's command name, as /proc says.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
