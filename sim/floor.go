package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
)

// The floor under the simulator: the same machines, given the same
// inputs in the same order, by a bare loop. A simulated run is captured
// (every call the simulator made into a machine: a start, a delivery, a
// timer's firing, a client's request), and then replayed on fresh
// machines with the same random sources: the inputs are a slice, read in
// order; what a machine sends is appended to a slice and forgotten; its
// timers, reports and replies go nowhere. There is no network model, no
// queue, no nemesis, no recorder and no check, so what the replay costs
// is what the machines themselves cost, and the simulator's deliveries
// per second against the replay's say how much of its time is its own.

// inputKind is what a captured call into a machine was.
type inputKind uint8

const (
	inStart   inputKind = iota // a new incarnation: a fresh machine, Start
	inReceive                  // Receive(from, msg)
	inTimeout                  // Timeout(name)
	inRequest                  // Request(req)
)

// input is one call the simulator made into a machine. A message is kept
// as its bytes, as it was when delivered: the simulator hands machines
// Go values, which a machine that forwards what it received may change
// afterwards; each replay decodes a fresh copy first (prepare).
type input struct {
	kind inputKind
	node int32
	from string
	name string
	body []byte
	msg  nodes.Msg
	req  nodes.Request
}

// capture appends an input when the run is being captured.
func (s *Sim) capture(in input) {
	if s.inputs == nil {
		return
	}
	if in.msg != nil {
		body, err := nodes.Encode(in.msg)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", s.cfg.Spec.Name, err)) // as send: a message that cannot be encoded is a bug
		}
		in.body, in.msg = body, nil
	}
	*s.inputs = append(*s.inputs, in)
}

// FloorFigures compare simulated runs with the bare loop's replay of the
// same inputs.
type FloorFigures struct {
	// Sim are the simulated runs' figures (checks not run).
	Sim Figures
	// Floor is the processor time of one replay of every run's inputs.
	Floor time.Duration
	// Inputs counts the inputs replayed (starts, deliveries, timers,
	// requests).
	Inputs int64
}

// FloorDeliveriesPerSecond is the replay's deliveries per second of
// processor time: the same deliveries as the simulator's.
func (f FloorFigures) FloorDeliveriesPerSecond() float64 {
	return rate(float64(f.Sim.Delivered), f.Floor)
}

// Ratio is the simulator's deliveries per second as a share of the
// floor's (0 when either is unknown).
func (f FloorFigures) Ratio() float64 {
	fl := f.FloorDeliveriesPerSecond()
	if fl == 0 {
		return 0
	}
	return f.Sim.DeliveriesPerSecond() / fl
}

// Add adds other's figures.
func (f *FloorFigures) Add(o FloorFigures) {
	f.Sim.Add(o.Sim)
	f.Floor += o.Floor
	f.Inputs += o.Inputs
}

// floorTime is how much processor time the replays of one run take at
// least, repeated up to floorReps times: a short run's replay takes a few
// microseconds, and each replay first decodes its messages afresh, which
// costs many times more.
const (
	floorTime = 2 * time.Millisecond
	floorReps = 5
)

// BenchFloor simulates a scenario for n seeds from from, one after
// another on the calling goroutine, as Bench does but without the checks,
// and replays each run's inputs in the bare loop, and returns both. Each
// seed is simulated twice: once measured, once captured (the capture's
// appends would weigh on the simulator's figure). For the processor
// times to be those of one core, run it with GOMAXPROCS=1 and nothing
// else running in the process.
func BenchFloor(sc *scenario.Scenario, from int64, n int) (FloorFigures, error) {
	var f FloorFigures
	hint := 0
	for i := range n {
		g, err := benchRun(sc, from+int64(i), &hint, false)
		if err != nil {
			return f, err
		}
		f.Sim.Add(g)

		inputs, fl, err := captureRun(sc, from+int64(i), hint)
		if err != nil {
			return f, err
		}
		f.Inputs += int64(len(inputs))
		var spent time.Duration
		reps := 0
		for reps == 0 || spent < floorTime && reps < floorReps {
			if err := fl.prepare(inputs); err != nil {
				return f, fmt.Errorf("%s, seed %d: %w", sc.Name, from+int64(i), err)
			}
			c2 := cpuTime()
			fl.replay(inputs)
			spent += cpuTime() - c2
			reps++
		}
		f.Floor += spent / time.Duration(reps)
	}
	return f, nil
}

// captureRun simulates one seed and returns the inputs its machines got,
// and the bare loop for its nodes.
func captureRun(sc *scenario.Scenario, seed int64, hint int) ([]input, *floor, error) {
	cfg, err := FromScenario(sc, seed)
	if err != nil {
		return nil, nil, err
	}
	cfg.EventsHint = hint
	s, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	inputs := make([]input, 0, 1024)
	s.inputs = &inputs
	if _, err := s.Run(); err != nil {
		return nil, nil, err
	}
	Recycle(&Outcome{array: s.rec.array()})
	return inputs, newFloor(s), nil
}

// floor is the bare loop: a machine and an environment per node.
type floor struct {
	spec   nodes.Spec
	params *nodes.Params
	seed   int64
	envs   []*floorEnv
	// sends counts the messages the machines sent, over every replay.
	sends int64
}

// newFloor makes the bare loop for a simulation's nodes: the same names,
// election ids, parameters and random sources.
func newFloor(s *Sim) *floor {
	f := &floor{spec: s.cfg.Spec, params: nodes.NewParams(s.cfg.Params), seed: s.cfg.Seed}
	for _, n := range s.nodes {
		f.envs = append(f.envs, &floorEnv{self: n.name, all: s.cfg.Nodes, ids: s.ids, rngSeed: n.rng})
	}
	return f
}

// prepare decodes a fresh copy of every message the inputs deliver.
func (f *floor) prepare(inputs []input) error {
	for i := range inputs {
		if in := &inputs[i]; in.kind == inReceive {
			m, err := f.spec.Codec.Decode(in.body)
			if err != nil {
				return fmt.Errorf("a captured message does not decode: %w", err)
			}
			in.msg = m
		}
	}
	return nil
}

// replay runs the inputs, prepared, in order on fresh machines.
func (f *floor) replay(inputs []input) {
	for i := range inputs {
		in := &inputs[i]
		e := f.envs[in.node]
		switch in.kind {
		case inStart:
			m, err := f.spec.New(f.params)
			if err != nil {
				return // New took these parameters in the simulated run
			}
			e.m = m
			e.rng = rand.New(rand.NewPCG(uint64(f.seed), e.rngSeed))
			e.call(func() { m.Start(e) })
		case inReceive:
			e.call(func() { e.m.Receive(in.from, in.msg) })
		case inTimeout:
			e.call(func() { e.m.Timeout(in.name) })
		case inRequest:
			e.call(func() { e.m.Request(in.req) })
		}
		f.sends += int64(len(e.sent))
		e.sent = e.sent[:0]
	}
}

// floorEnv is a node's environment in the bare loop (nodes.Env).
type floorEnv struct {
	self    string
	all     []string
	ids     map[string]int
	rngSeed uint64
	rng     *rand.Rand
	m       nodes.Machine
	sent    []nodes.Msg
}

var _ nodes.Env = (*floorEnv)(nil)

// call runs one input; a machine that panics panicked in the simulated
// run too, where it ended its incarnation.
func (e *floorEnv) call(fn func()) {
	defer func() { _ = recover() }()
	fn()
}

func (e *floorEnv) Self() string                    { return e.self }
func (e *floorEnv) Nodes() []string                 { return e.all }
func (e *floorEnv) ElectionID(node string) int      { return e.ids[node] }
func (e *floorEnv) Send(to string, m nodes.Msg)     { e.sent = append(e.sent, m) }
func (e *floorEnv) SetTimer(string, time.Duration)  {}
func (e *floorEnv) CancelTimer(string)              {}
func (e *floorEnv) Report(nodes.Report)             {}
func (e *floorEnv) Reply(nodes.Request, string)     {}
func (e *floorEnv) ReplyWith(nodes.Request, any)    {}
func (e *floorEnv) Fail(nodes.Request, nodes.Error) {}
func (e *floorEnv) Rand() *rand.Rand                { return e.rng }
func (e *floorEnv) Logf(string, ...any)             {}
