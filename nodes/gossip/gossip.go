// Package gossip is the memberlist gossip node as coup's catalogue knows
// it: its name, its parameters, and where its program is. The node runs
// SWIM membership (HashiCorp's memberlist) with the leader taken to be the
// live member with the highest election id. It is not a state machine:
// memberlist keeps its own clock and goroutines, so it runs only as a real
// process, never in the simulator.
//
// The node program is a module of its own, in coup-memberlist/, so that
// memberlist and what it needs (miekg/dns, golang.org/x/net, go-metrics,
// …) are not dependencies of coup's module, nor of a module that uses coup
// as a library. Program finds it, building it from this clone on first
// use; coup-memberlist/node.go says how the node works.
package gossip

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/nodes"
)

// Params are the node's parameters, from the scenario's [params] table. The
// defaults are memberlist's local-network ones scaled down tenfold, to suit
// runs of a few seconds on one machine.
type Params struct {
	// ProbeInterval ("probe_interval"): how often a member probes another.
	// Default 100ms.
	ProbeInterval time.Duration
	// ProbeTimeout ("probe_timeout"): how long a probe waits for its ack.
	// Default 50ms.
	ProbeTimeout time.Duration
	// GossipInterval ("gossip_interval"): how often a member gossips.
	// Default 20ms.
	GossipInterval time.Duration
	// SuspicionMult ("suspicion_mult"): a suspect is declared dead after
	// suspicion_mult · log10(n) probe intervals (at least one). Default 2.
	SuspicionMult int
	// PushPullInterval ("push_pull_interval"): how often a member syncs
	// its whole state with a random live member over a stream; "0s": never.
	// Default 0s.
	PushPullInterval time.Duration
	// GossipToTheDead ("gossip_to_the_dead"): how long members still
	// gossip to a member they declared dead, which lets it refute. Default
	// 0s.
	GossipToTheDead time.Duration
	// RejoinEvery ("rejoin_every"): how often a node joins again every node
	// it does not believe alive; "0s": never. Default 0s.
	RejoinEvery time.Duration
	// StreamTimeout ("stream_timeout"): how long a stream operation (a join,
	// a push-pull, a fallback probe) may take. Default 500ms.
	StreamTimeout time.Duration
}

// ParseParams reads the parameters, with their defaults.
func ParseParams(p *nodes.Params) (Params, error) {
	var out Params
	var err error
	for _, d := range []struct {
		key string
		to  *time.Duration
		def time.Duration
	}{
		{"probe_interval", &out.ProbeInterval, 100 * time.Millisecond},
		{"probe_timeout", &out.ProbeTimeout, 50 * time.Millisecond},
		{"gossip_interval", &out.GossipInterval, 20 * time.Millisecond},
		{"stream_timeout", &out.StreamTimeout, 500 * time.Millisecond},
	} {
		if *d.to, err = p.PositiveDuration(d.key, d.def); err != nil {
			return out, err
		}
	}
	for _, d := range []struct {
		key string
		to  *time.Duration
	}{
		{"push_pull_interval", &out.PushPullInterval},
		{"gossip_to_the_dead", &out.GossipToTheDead},
		{"rejoin_every", &out.RejoinEvery},
	} {
		if *d.to, err = p.Duration(d.key, 0); err != nil {
			return out, err
		}
	}
	if out.SuspicionMult, err = p.Int("suspicion_mult", 2); err != nil {
		return out, err
	}
	if out.SuspicionMult < 1 {
		return out, &nodes.ParamError{Key: "suspicion_mult", Err: fmt.Sprintf("must be at least 1, got %d", out.SuspicionMult)}
	}
	if out.ProbeTimeout >= out.ProbeInterval {
		return out, &nodes.ParamError{Key: "probe_timeout", Err: fmt.Sprintf("must be shorter than probe_interval (%s), got %s", out.ProbeInterval, out.ProbeTimeout)}
	}
	return out, p.Unused()
}

// Name is the algorithm's name in scenarios.
const Name = "memberlist"

// Spec describes the node to the harness.
var Spec = nodes.Spec{
	Name:     Name,
	Summary:  "SWIM membership (memberlist); the leader is the highest live member; real processes only",
	Topology: "complete",
	Elects:   "max",
	New: func(p *nodes.Params) (nodes.Machine, error) {
		_, err := ParseParams(p)
		return nil, err
	},
	Program: Program,
}
