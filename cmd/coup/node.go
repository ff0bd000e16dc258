package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/nodes/algorithms"
	"github.com/coupharness/coup/nodes/process"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

const nodeUsage = `usage: coup node --algo NAME

Runs the built-in node program: it speaks the node protocol (docs/protocol.md)
on stdin and stdout and logs on stderr. coup run starts it for every node
of a scenario that names a built-in algorithm; run by hand, it waits for
the init message on stdin.

flags:
`

func nodeCmd(args []string) int {
	fs := newFlags("node")
	algo := fs.String("algo", "", "the algorithm to run ("+strings.Join(algorithms.Names(), ", ")+")")
	pos, code, ok := parseArgs(fs, nodeUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, nodeUsage, "no arguments expected, got %q", pos[0])
	}
	spec, ok := algorithms.Lookup(*algo)
	if !ok {
		if *algo == "" {
			return usageError(fs, nodeUsage, "--algo is missing")
		}
		fmt.Fprintf(os.Stderr, "coup node: unknown algorithm %q%s (known: %s)\n", *algo, scenario.DidYouMean(*algo, algorithms.Names()), strings.Join(algorithms.Names(), ", "))
		return verdict.ExitInput
	}
	if spec.Program != nil {
		return execProgram(spec)
	}
	if err := process.Run(process.Options{In: os.Stdin, Out: os.Stdout, Log: os.Stderr, Spec: spec}); err != nil {
		fmt.Fprintf(os.Stderr, "coup node: %v\n", err)
		return 1
	}
	return 0
}

// execProgram becomes the node program of an algorithm that is a program of
// its own (memberlist), built first when needed: the program replaces this
// process, so that it keeps its stdin, stdout, stderr and process group.
// It returns only when that fails.
func execProgram(spec nodes.Spec) int {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "coup node: "+format+"\n", args...) }
	path, err := spec.Program(context.Background(), logf)
	if err == nil {
		err = syscall.Exec(path, []string{path}, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "coup node: %s: %v\n", spec.Name, err)
	return 1
}

const algorithmsUsage = `usage: coup algorithms

Lists the built-in algorithms: name, topology and what each does.
docs/algorithms.md says more of each.
`

func algorithmsCmd(args []string) int {
	fs := newFlags("algorithms")
	pos, code, ok := parseArgs(fs, algorithmsUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, algorithmsUsage, "no arguments expected, got %q", pos[0])
	}
	for _, name := range algorithms.Names() {
		spec, _ := algorithms.Lookup(name)
		fmt.Printf("%-22s %-20s %s\n", name, spec.Topology, spec.Summary)
	}
	return 0
}
