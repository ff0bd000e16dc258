// Command raft-node is examples/raft's store as a real node process: a
// scenario whose command runs it (run.sh builds it) puts etcd's raft
// library under coup run, with real processes and every fault.
package main

import (
	"github.com/coupharness/coup"
	"github.com/coupharness/coup/examples/raft/raftkv"
)

func main() { coup.Serve(raftkv.Node) }
