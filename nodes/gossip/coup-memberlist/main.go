// Command coup-memberlist is the memberlist gossip node: SWIM membership
// (HashiCorp's memberlist) with the leader taken to be the live member with
// the highest election id. It is the program a scenario with algorithm =
// "memberlist" runs for each node (coup builds it from this folder on first
// use; see package gossip's Program), and that coup node --algo memberlist
// runs. It is not a state machine: memberlist keeps its own clock and
// goroutines, so it runs only as a real process, never in the simulator.
//
// It is a module of its own, so that memberlist and what it needs are not
// dependencies of coup's module, nor of a module that uses coup as a
// library. Its go.mod requires coup, replaced by this clone.
//
// Every byte memberlist sends goes through the harness as node-protocol
// messages (see transport.go): its packets as "packet", its streams as
// "open", "data" and "close". So partitions, loss, delay, duplication and
// corruption reach it like any other node. Nothing listens on any address.
//
// Each node joins every other at start. A member that stops answering
// probes is suspected and then declared dead; each node reports as leader
// the highest election id among itself and the members it believes alive.
// During a partition each side declares the other dead and elects its own
// leader. memberlist does not reach out to dead members unless told to
// (gossip_to_the_dead), so after the partition heals the views stay split,
// unless the nodes rejoin (rejoin_every).
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := Run(os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "coup-memberlist: %v\n", err)
		os.Exit(1)
	}
}
