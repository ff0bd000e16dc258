package nemesis

import (
	"fmt"
	"sort"
	"time"
)

// Fault is one fault of a scenario, in the nemesis's terms.
type Fault struct {
	// Kind is the fault ("crash").
	Kind string
	// Nodes are the nodes it hits.
	Nodes []string
	// At is when it begins, from the start of the run.
	At time.Duration
}

// Action is one step of a plan: at a time, do something to some nodes.
type Action struct {
	At    time.Duration
	Kind  string // "crash"
	Nodes []string
	// Fault is the index of the scenario fault the action comes from.
	Fault int
}

func (a Action) String() string { return fmt.Sprintf("%s %v at %s", a.Kind, a.Nodes, a.At) }

// Plan turns faults into actions in time order (ties in scenario order).
func Plan(faults []Fault) []Action {
	var out []Action
	for i, f := range faults {
		out = append(out, Action{At: f.At, Kind: f.Kind, Nodes: f.Nodes, Fault: i})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Cluster is what process faults act on. Each driver implements it.
type Cluster interface {
	// Crash kills a node's process (SIGKILL, or its simulated equivalent).
	Crash(node string) error
}

// Apply carries out an action on a cluster.
func Apply(a Action, c Cluster) error {
	switch a.Kind {
	case "crash":
		for _, n := range a.Nodes {
			if err := c.Crash(n); err != nil {
				return fmt.Errorf("crash %s: %w", n, err)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown fault %q", a.Kind)
}
