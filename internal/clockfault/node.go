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
	firstMu sync.Mutex
	first   map[int]Reading
	// reading is the read-backs of the last Set still waiting for reads.
	reading sync.WaitGroup
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
// puts their clocks right when it is zero, and records through record the
// clock events of what their reads saw (node left for the driver to fill
// in): at the start, once each process has read a clock the fault moves
// (up to ReadWait later, on a goroutine of its own); at the end, at once.
// A process that ended meanwhile is skipped.
func (n *Node) Set(s nemesis.Skew, pids []int, record func(history.Event)) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reading.Wait()
	if s.IsZero() {
		return n.reset(s.Fault, pids, record)
	}
	st := Begin(FromNemesis(s))
	if n.setting != nil {
		st.Carry = n.setting.Carried(st.MonotonicAt)
	}
	n.setting, n.fault, n.first = &st, s.Fault, map[int]Reading{}
	var errs []error
	for _, pid := range pids {
		if err := Apply(pid, st); err != nil {
			if !errors.Is(err, ErrGone) {
				errs = append(errs, err)
			}
			continue
		}
		n.reading.Add(1)
		go func() {
			defer n.reading.Done()
			r, err := waitRead(pid, st)
			if err == nil && r.seen(st) {
				n.firstMu.Lock()
				n.first[pid] = r
				n.firstMu.Unlock()
			}
			e := event(pid, r, err, nil, &st)
			e.Name = s.Fault
			record(e)
		}()
	}
	return errors.Join(errs...)
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
func (n *Node) reset(fault string, pids []int, record func(history.Event)) error {
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
	var errs []error
	for _, pid := range pids {
		if st != nil {
			r, err := Read(pid)
			if errors.Is(err, ErrGone) {
				continue
			}
			if first, ok := n.first[pid]; ok || err != nil || r.seen(*st) {
				e := event(pid, r, err, &first, st)
				e.Name = fault
				if keep != nil {
					e.Detail += fmt.Sprintf("; the wall clock set right, the monotonic clocks keep their %s (a monotonic clock never goes back)", signed(keep.Carry.Round(time.Millisecond)))
				}
				record(e)
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
	n.first = nil
	return errors.Join(errs...)
}

// waitRead waits, up to ReadWait, for the process's reads to show the
// setting: a read of a clock it moves, after it began.
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

// seen reports whether the process has read a clock the setting moves
// since it began.
func (r Reading) seen(st Setting) bool {
	return r.Counted && (st.Realtime && r.Realtime.readSince(st.RealtimeAt) || st.Monotonic && r.Monotonic.readSince(st.MonotonicAt))
}

func (r Reads) readSince(t int64) bool { return r.Count > 0 && r.At >= t }

// event says what a reading showed of the clocks the setting moves, with
// the rate measured since first when it is given.
func event(pid int, r Reading, err error, first *Reading, st *Setting) history.Event {
	e := history.Event{Kind: history.KindClock}
	who := fmt.Sprintf("pid %d (%s)", pid, comm(pid))
	switch {
	case err != nil:
		e.What, e.Detail = history.ClockUnseen, fmt.Sprintf("%s: %v", who, err)
		return e
	case !r.Counted:
		e.What, e.Detail = history.ClockUnseen, who+": the hook is in, but the process had no room to count its reads: its clock is not read back"
		return e
	}
	parts := []string{who}
	for _, c := range []struct {
		name   string
		moved  bool
		since  int64
		r      Reads
		before func(Reading) Reads
	}{
		{"realtime", st.Realtime, st.RealtimeAt, r.Realtime, func(x Reading) Reads { return x.Realtime }},
		{"monotonic", st.Monotonic || st.Carry != 0, st.MonotonicAt, r.Monotonic, func(x Reading) Reads { return x.Monotonic }},
	} {
		if !c.moved || !c.r.readSince(c.since) {
			continue
		}
		if e.Value == "" {
			e.Value = signed(time.Duration(c.r.Skew))
		}
		s := fmt.Sprintf("%s %s (%d reads)", c.name, signed(time.Duration(c.r.Skew)), c.r.Count)
		if first != nil && first.Counted {
			if f := c.before(*first); f.Count > 0 && c.r.At > f.At {
				rate := 1 + float64(c.r.Skew-f.Skew)/float64(c.r.At-f.At)
				s += fmt.Sprintf(", rate %.3f over %s", rate, time.Duration(c.r.At-f.At).Round(time.Millisecond))
			}
		}
		parts = append(parts, s)
	}
	if e.Value == "" {
		e.What, e.Detail = history.ClockUnseen, fmt.Sprintf("%s: it read none of the clocks the fault moves within %s of its start (a program that makes the system call itself is out of reach)", who, ReadWait)
		return e
	}
	e.What, e.Detail = history.ClockSeen, strings.Join(parts, "; ")
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
