package nodes

import "context"

// Spec describes a built-in algorithm.
type Spec struct {
	// Name is the algorithm's name in scenarios ("chang-roberts").
	Name string
	// Summary is one line for `coup algorithms` and the docs.
	Summary string
	// Topology is "ring", "bidirectional ring" or "complete".
	Topology string
	// Kind is the problem the algorithm solves: KindElection or KindMutex.
	// It picks a scenario's default workload and checks; "" counts as an
	// election.
	Kind string
	// Elects is "max" when the algorithm elects the highest election id,
	// "min" when the smallest, "" when it elects no leader (mutual
	// exclusion) or any leader is valid.
	Elects string
	// Bound is the most messages one election may cost among n nodes of
	// which initiators start it, by the algorithm's analysis; nil when
	// there is no such bound (heartbeat algorithms, mutual exclusion).
	Bound func(n, initiators int) int
	// Codec decodes the algorithm's messages.
	Codec *Codec
	// New validates the parameters and builds a machine. It must return a
	// *ParamError (or wrap one) for a bad parameter, and call p.Unused()
	// so that unknown parameters are rejected.
	New func(p *Params) (Machine, error)
	// Program, when set, finds the node program of an algorithm that is
	// not a state machine: one that keeps its own clock and goroutines
	// (the memberlist gossip node), and is a program of its own, so that
	// its dependencies are not coup's. It returns the path of the
	// program's executable, which speaks the node protocol on stdin and
	// stdout, building it first when needed; logf says so before a build,
	// which may take a while. New then only validates the parameters and
	// returns a nil Machine; such an algorithm runs only as a real
	// process, never in the simulator.
	Program func(ctx context.Context, logf func(format string, args ...any)) (string, error)
}

// The kinds of algorithm.
const (
	// KindElection algorithms elect a leader: nodes report whom they trust
	// and clients ask them to "elect".
	KindElection = "election"
	// KindMutex algorithms grant a critical section: clients "acquire" and
	// "release", and nodes report entering and leaving it.
	KindMutex = "mutex"
	// KindLinKV nodes are a linearizable key-value store serving
	// Maelstrom's lin-kv workload (read, write, cas). No built-in
	// algorithm is one: a foreign node's scenario says so by its
	// workload.
	KindLinKV = "lin-kv"
	// KindEcho nodes answer Maelstrom's echo workload. No built-in
	// algorithm is one.
	KindEcho = "echo"
	// KindSet nodes keep a set that grows, serving Jepsen's set workload
	// in Maelstrom's g-set bodies (add, read). No built-in algorithm is
	// one.
	KindSet = "set"
)

// IsMutex reports whether the algorithm grants mutual exclusion.
func (s Spec) IsMutex() bool { return s.Kind == KindMutex }
