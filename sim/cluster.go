package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

var _ nemesis.Cluster = (*Sim)(nil)

var (
	errNoNode = errors.New("no such node")
	errDown   = errors.New("the node is down")
	errUp     = errors.New("the node is up")
	errPaused = errors.New("the node is already paused")
	errActive = errors.New("the node is not paused")
)

func (s *Sim) member(name string) (*node, error) {
	n := s.byName[name]
	if n == nil {
		return nil, fmt.Errorf("%w %q", errNoNode, name)
	}
	return n, nil
}

// Crash kills a node: it stops at once, its timers die, what it held while
// paused is dropped (nemesis.Cluster).
func (s *Sim) Crash(name string) error {
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

// Restart starts a fresh incarnation of a node that is down, under the same
// id, after a restart time drawn from Config.Restart (nemesis.Cluster). It
// returns once the node is up, as a real driver waits for the init
// handshake, while the rest of the cluster runs; until then, messages to
// it are dropped as to a node that is down.
func (s *Sim) Restart(name string) error {
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
	for n.state == starting && s.q.len() > 0 {
		s.step()
	}
	return nil
}

// Pause stops a node: it receives nothing and its timers do not fire until
// it is resumed; what arrives meanwhile waits for it (nemesis.Cluster).
func (s *Sim) Pause(name string) error {
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

// Resume continues a paused node: the timers that expired meanwhile fire,
// then what arrived is delivered, in order (nemesis.Cluster).
func (s *Sim) Resume(name string) error {
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

// ClockRate makes a node's timers run rate times fast: at once when it is
// up (through its input queue, as a control message), and from its next
// start otherwise (nemesis.Cluster).
func (s *Sim) ClockRate(name string, rate float64) error {
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
