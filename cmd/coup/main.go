// Command coup is a chaos harness for leader election and mutual
// exclusion: it runs scenarios against real node processes, records one
// history and checks it.
//
//	coup run FILE|DIR...        run scenarios
//	coup check HISTORY          re-check a stored history
//	coup sim FILE               simulate a scenario: one seed, a sweep, a replay
//	coup explore FILE           search for the fault schedule nobody wrote
//	coup list [DIR]             list the scenarios of a folder
//	coup shrink FILE            shrink a failing scenario, on any driver
//	coup node --algo NAME       the built-in node program
//	coup adapter etcd|zookeeper a built-in client of real servers, as a process
//	coup algorithms             list the built-in algorithms
//	coup bench                  measure the harness: router, proxy, startup, history
//	coup version                print coup's version
//	coup help CMD               print a command's usage
//
// Every command takes its flags before or after its arguments, and prints
// its usage for -h, --help or `coup help CMD`.
//
// Exit codes: 0 every outcome as expected, 1 a check failed unexpectedly
// (or an expected violation was not found), 2 usage or input error, 3 a
// verdict could not be reached.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

const usage = `coup: a chaos harness for leader election and mutual exclusion

usage:
  coup run [--store DIR] [--repeat N] [--quiet] [--junit FILE]
           [--seed S] [--set KEY=VALUE]... FILE|DIR...
                                 run scenarios (a DIR runs every *.toml in it)
  coup check [--json] [--report FILE] HISTORY
                                 re-check a stored history.jsonl
  coup sim FILE [--seed S] [--seeds N [--first]] [--check-determinism]
                                 simulate a scenario's built-in algorithm on a
                                 virtual clock: one seed (saved in the store),
                                 a sweep of seeds, or a determinism check
  coup sim FILE --seeds N [--strategy random|pct[:D]|bias|portfolio]
           [--shard k/n] [--out RESULTS.jsonl]
                                 sweep seeds with a search strategy, or one
                                 shard of a sweep spread over machines
  coup sim merge RESULTS.jsonl...
                                 combine a sweep's shards
  coup sim FILE --seed S --shrink [--budget N] [--out FILE]
                                 shrink a failing run to a smaller scenario
                                 that fails the same way
  coup sim --bench [--seeds N] FILE|DIR...
                                 measure the simulator's speed
  coup explore FILE [--runs N | --time D] [--strategy random|guided]
           [--seed S] [--driver sim|processes|servers] [--shard k/n]
           [--out RESULTS.jsonl] [--store DIR] [--junit FILE] [--quiet]
                                 explore: run fault schedules drawn from the
                                 scenario's vocabulary, guided by what each run
                                 showed, on any driver; keep every failure
  coup explore merge RESULTS.jsonl...
                                 combine a campaign's shards
  coup list [FILE|DIR...]        list scenarios: name, algorithm, faults and
                                 expected outcome (default: scenarios/)
  coup shrink FILE [--runs N] [--budget N|DURATION] [--out FILE] [--sim]
                                 shrink a failing scenario to a smaller one
                                 that fails the same way, on real processes
                                 or servers (or the simulator), and measure
                                 how often it does in fresh runs
  coup node --algo NAME          run the built-in node program (speaks the
                                 node protocol on stdin/stdout)
  coup adapter etcd|zookeeper     run a built-in client of real servers as a
                                 client process (speaks the client protocol
                                 on stdin/stdout)
  coup algorithms                list the built-in algorithms
  coup bench [--only PART,...] [--rounds N] [--nodes N,...] [--events N]
                                 measure the router against a minimal relay,
                                 the start of many nodes, and reading and
                                 checking a large history
  coup version                   print coup's version (also coup --version)
  coup help CMD                  print a command's usage (also coup CMD --help)

Flags may come before or after a command's files.

exit codes: 0 as expected, 1 unexpected verdict, 2 usage or input error,
3 no verdict (interrupted, or a check could not decide)
`

// command is one of coup's commands.
type command struct {
	name string
	run  func(args []string) int
}

// commands lists coup's commands; help is added in init, since it refers
// to the list.
var commands = []command{
	{"run", runCmd},
	{"check", checkCmd},
	{"sim", simCmd},
	{"explore", exploreCmd},
	{"list", listCmd},
	{"shrink", shrinkCmd},
	{"node", nodeCmd},
	{"adapter", adapterCmd},
	{"algorithms", algorithmsCmd},
	{"version", versionCmd},
	{"bench", benchCmd},
}

func init() {
	commands = append(commands, command{"help", helpCmd})
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return verdict.ExitInput
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Print(usage)
		return verdict.ExitOK
	case "-version", "--version":
		return versionCmd(args[1:])
	case "bench-probe": // the benchmark's probe node, not a command for people
		return benchProbeCmd(args[1:])
	}
	if c, ok := lookupCommand(args[0]); ok {
		return c.run(args[1:])
	}
	fmt.Fprintf(os.Stderr, "coup: unknown command %q%s\n\n%s", args[0], scenario.DidYouMean(args[0], commandNames()), usage)
	return verdict.ExitInput
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func commandNames() []string {
	out := make([]string, len(commands))
	for i, c := range commands {
		out[i] = c.name
	}
	return out
}

const helpUsage = `usage: coup help [CMD]

Prints the usage of the command CMD (the same as coup CMD --help), or,
without CMD, coup's general usage.
`

func helpCmd(args []string) int {
	fs := newFlags("help")
	pos, code, ok := parseArgs(fs, helpUsage, args)
	if !ok {
		return code
	}
	switch len(pos) {
	case 0:
		fmt.Print(usage)
		return verdict.ExitOK
	case 1:
	default:
		return usageError(fs, helpUsage, "one command at a time")
	}
	c, ok := lookupCommand(pos[0])
	if !ok {
		return usageError(fs, helpUsage, "unknown command %q%s (known: %s)", pos[0], scenario.DidYouMean(pos[0], commandNames()), strings.Join(commandNames(), ", "))
	}
	return c.run([]string{"--help"})
}
