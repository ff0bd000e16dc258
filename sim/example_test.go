package sim_test

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/nodes/bully"
	"github.com/coupharness/coup/sim"
)

// An algorithm's test with the simulator as its network: five bully nodes,
// the coordinator crashed by hand, a pause from the nemesis.
func Example() {
	pause := nemesis.Fault{Kind: nemesis.Pause, Target: nemesis.Target{Nodes: []string{"n1"}}, At: 400 * time.Millisecond, For: 100 * time.Millisecond}
	ring := []string{"n1", "n2", "n3", "n4", "n5"}
	if err := pause.Check(ring, time.Second); err != nil {
		panic(err)
	}
	s, err := sim.New(sim.Config{
		Spec:    bully.Spec,
		Nodes:   ring,
		Seed:    1,
		Latency: time.Millisecond, Jitter: time.Millisecond, FIFO: true,
		Faults:   []nemesis.Fault{pause},
		Duration: time.Second, Recovery: 500 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	s.RunFor(100 * time.Millisecond)
	fmt.Println("n1 believes in", s.Leader("n1"))
	if err := s.Crash("n5"); err != nil {
		panic(err)
	}
	s.RunFor(300 * time.Millisecond)
	fmt.Println("n1 believes in", s.Leader("n1"))
	h, err := s.Finish()
	if err != nil {
		panic(err)
	}
	fmt.Println("events:", len(h.Events) > 0, "ended:", h.Ended)
	// Output:
	// n1 believes in n5
	// n1 believes in n4
	// events: true ended: true
}
