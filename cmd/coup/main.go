// Command coup is a chaos harness for leader election and mutual
// exclusion: it runs scenarios against real node processes, records one
// history and checks it.
//
//	coup run FILE|DIR...        run scenarios
//	coup check HISTORY          re-check a stored history
//	coup sim FILE               simulate a scenario: one seed, a sweep, a replay
//	coup node --algo NAME       the built-in node program
//	coup algorithms             list the built-in algorithms
//	coup bench                  measure the harness: router, startup, history
//
// Exit codes: 0 every outcome as expected, 1 a check failed unexpectedly
// (or an expected violation was not found), 2 usage or input error, 3 a
// verdict could not be reached.
package main

import (
	"fmt"
	"os"

	"coup/harness"
)

const usage = `coup: a chaos harness for leader election and mutual exclusion

usage:
  coup run [--store DIR] [--repeat N] [--quiet] FILE|DIR...
                                 run scenarios (a DIR runs every *.toml in it)
  coup check [--json] HISTORY    re-check a stored history.jsonl
  coup sim FILE [--seed S] [--seeds N [--first]] [--check-determinism]
                                 simulate a scenario's built-in algorithm on a
                                 virtual clock: one seed (saved in the store),
                                 a sweep of seeds, or a determinism check
  coup sim --bench [--seeds N] FILE|DIR...
                                 measure the simulator's speed
  coup node --algo NAME          run the built-in node program (speaks the
                                 node protocol on stdin/stdout)
  coup algorithms                list the built-in algorithms
  coup bench [--only PART,...] [--rounds N] [--nodes N,...] [--events N]
                                 measure the router against a minimal relay,
                                 the start of many nodes, and reading and
                                 checking a large history

exit codes: 0 as expected, 1 unexpected verdict, 2 usage or input error,
3 no verdict (interrupted, or a check could not decide)
`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return harness.ExitInput
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:])
	case "check":
		return checkCmd(args[1:])
	case "sim":
		return simCmd(args[1:])
	case "node":
		return nodeCmd(args[1:])
	case "algorithms":
		return algorithmsCmd(args[1:])
	case "bench":
		return benchCmd(args[1:])
	case "bench-probe": // the benchmark's probe node, not for people
		return benchProbeCmd(args[1:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return harness.ExitOK
	}
	fmt.Fprintf(os.Stderr, "coup: unknown command %q\n\n%s", args[0], usage)
	return harness.ExitInput
}
