package sim

import (
	"errors"
	"fmt"
	"time"

	"coup/harness"
	"coup/harness/history"
	"coup/nemesis"
)

var _ nemesis.Cluster = (*Sim)(nil)

var (
	errNoNode = errors.New("no such node")
	errDown   = errors.New("the node is down")
	errUp     = errors.New("the node is up")
	errPaused = errors.New("the node is already paused")
	errActive = errors.New("the node is not paused")
)

// op is a cluster operation the nemesis driver issued while it waited for
// a restart; it runs, in order, once the restart is done.
type op struct {
	what string // "crash", "restart", "pause", "resume", "clock"
	node string
	rate float64
	// ifCrashed skips a replace's restart whose crash failed, as the real
	// driver does.
	ifCrashed bool
}

// carryOut records and applies the nemesis's actions in order. Applying a
// restart takes the restart's time: the driver waits for the node to come
// up before it goes on (a real driver blocks in Restart), while the rest
// of the cluster runs.
func (s *Sim) carryOut(acts []nemesis.Action) {
	s.acts = append(s.acts, acts...)
	s.pump()
}

// pump goes on with the driver's work until it must wait for a restart.
func (s *Sim) pump() {
	for !s.blocked {
		if len(s.ops) > 0 {
			o := s.ops[0]
			s.ops = s.ops[1:]
			s.runOp(o)
			continue
		}
		if len(s.acts) == 0 {
			return
		}
		a := s.acts[0]
		s.acts = s.acts[1:]
		if a.Skip != "" {
			s.logf("nemesis: %s", a)
			if a.Phase == history.PhaseStart {
				s.cnt.other[harness.CountFaultsSkipped]++
			}
			continue
		}
		s.record(a.Event())
		s.applying = a.Kind
		err := s.nem.Apply(a, s)
		s.applying = ""
		if err != nil {
			s.logf("nemesis: %s: %v", a, err)
		}
		s.logf("nemesis: %s (due at %s)", a, a.At)
	}
}

func (s *Sim) runOp(o op) {
	var err error
	switch o.what {
	case "crash":
		err = s.crash(o.node)
		s.opFailed = err != nil
	case "restart":
		if o.ifCrashed && s.opFailed {
			return
		}
		err = s.restart(o.node)
	case "pause":
		err = s.pause(o.node)
	case "resume":
		err = s.resume(o.node)
	case "clock":
		err = s.clockRate(o.node, o.rate)
	}
	if err != nil {
		s.logf("nemesis: %s %s: %v", o.what, o.node, err)
	}
}

// defer queues an operation while the driver waits; it reports whether it
// did.
func (s *Sim) deferOp(o op) bool {
	if !s.blocked {
		return false
	}
	if o.what == "restart" && s.applying == nemesis.Replace && len(s.ops) > 0 {
		last := s.ops[len(s.ops)-1]
		o.ifCrashed = last.what == "crash" && last.node == o.node
	}
	s.ops = append(s.ops, o)
	return true
}

// Crash kills a node: it stops at once, its timers die, what it held while
// paused is dropped (nemesis.Cluster).
func (s *Sim) Crash(node string) error {
	if s.deferOp(op{what: "crash", node: node}) {
		return nil
	}
	return s.crash(node)
}

// Restart starts a fresh incarnation of a node that is down, under the same
// id, after a restart time drawn from Config.Restart (nemesis.Cluster).
// Until it is up, messages to it are dropped as to a node that is down,
// and the nemesis driver waits.
func (s *Sim) Restart(node string) error {
	if s.deferOp(op{what: "restart", node: node}) {
		return nil
	}
	return s.restart(node)
}

// Pause stops a node: it receives nothing and its timers do not fire until
// it is resumed; what arrives meanwhile waits for it (nemesis.Cluster).
func (s *Sim) Pause(node string) error {
	if s.deferOp(op{what: "pause", node: node}) {
		return nil
	}
	return s.pause(node)
}

// Resume continues a paused node: the timers that expired meanwhile fire,
// then what arrived is delivered, in order (nemesis.Cluster).
func (s *Sim) Resume(node string) error {
	if s.deferOp(op{what: "resume", node: node}) {
		return nil
	}
	return s.resume(node)
}

// ClockRate makes a node's timers run rate times fast: at once when it is
// up (through its input queue, as a control message), and from its next
// start otherwise (nemesis.Cluster).
func (s *Sim) ClockRate(node string, rate float64) error {
	if s.deferOp(op{what: "clock", node: node, rate: rate}) {
		return nil
	}
	return s.clockRate(node, rate)
}

func (s *Sim) member(name string) (*node, error) {
	n := s.byName[name]
	if n == nil {
		return nil, fmt.Errorf("%w %q", errNoNode, name)
	}
	return n, nil
}

func (s *Sim) crash(name string) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	if n.state != up {
		return errDown
	}
	n.end(history.ProcCrash)
	return nil
}

func (s *Sim) restart(name string) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	if n.state != down {
		return errUp
	}
	n.state = starting
	d := s.cfg.Restart.Min
	if span := s.cfg.Restart.Max - s.cfg.Restart.Min; span > 0 {
		d += time.Duration(s.rng.Int64N(int64(span)))
	}
	s.push(item{at: s.now + d, kind: kStart, to: n.index})
	s.blocked = true
	return nil
}

func (s *Sim) pause(name string) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	switch {
	case n.state != up:
		return errDown
	case n.paused:
		return errPaused
	}
	n.paused = true
	s.record(history.Event{Kind: history.KindProcess, Node: name, What: history.ProcPause, Incarnation: int(n.inc)})
	return nil
}

func (s *Sim) resume(name string) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	switch {
	case n.state != up:
		return errDown
	case !n.paused:
		return errActive
	}
	s.record(history.Event{Kind: history.KindProcess, Node: name, What: history.ProcResume, Incarnation: int(n.inc)})
	n.paused = false
	n.resume()
	return nil
}

func (s *Sim) clockRate(name string, rate float64) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	n.setRate = rate
	if n.state == up {
		s.push(item{at: s.now, kind: kControl, to: n.index, x: &extra{rate: rate}})
	}
	return nil
}
