package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"coup/harness"
	"coup/nodes/algorithms"
	"coup/nodes/process"
)

func nodeCmd(args []string) int {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	algo := fs.String("algo", "", "the algorithm to run ("+strings.Join(algorithms.Names(), ", ")+")")
	if err := fs.Parse(args); err != nil {
		return harness.ExitInput
	}
	spec, ok := algorithms.Lookup(*algo)
	if !ok {
		fmt.Fprintf(os.Stderr, "coup node: unknown algorithm %q (known: %s)\n", *algo, strings.Join(algorithms.Names(), ", "))
		return harness.ExitInput
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	var err error
	if spec.Program != nil {
		err = spec.Program(os.Stdin, os.Stdout, os.Stderr)
	} else {
		err = process.Run(process.Options{In: os.Stdin, Out: os.Stdout, Log: os.Stderr, Spec: spec})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "coup node: %v\n", err)
		return 1
	}
	return 0
}

func algorithmsCmd([]string) int {
	for _, name := range algorithms.Names() {
		spec, _ := algorithms.Lookup(name)
		fmt.Printf("%-22s %-20s %s\n", name, spec.Topology, spec.Summary)
	}
	return 0
}
