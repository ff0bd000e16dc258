package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coupharness/coup/verdict"
)

// Every command parses its flags the same way: anywhere among its
// arguments ("coup run FILE --quiet" as "coup run --quiet FILE"), up to a
// "--" after which everything is an argument; -h and --help print the
// command's usage on stdout and exit 0; a bad flag prints what is wrong and
// the usage on stderr and exits 2.

// newFlags makes a command's flag set; parseArgs prints its errors.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses args with fs and returns the positional arguments. When
// ok is false the command must return code: 0 after printing the usage for
// -h or --help, 2 after a usage error.
func parseArgs(fs *flag.FlagSet, usage string, args []string) (pos []string, code int, ok bool) {
	// The flag package calls Usage itself on -h and on errors; this
	// function prints instead. Usage is left printing on stderr for the
	// command's own usage errors.
	fs.Usage = func() {}
	defer func() { fs.Usage = func() { printUsage(os.Stderr, fs, usage) } }()
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printUsage(os.Stdout, fs, usage)
			return nil, verdict.ExitOK, false
		}
		if err != nil {
			return nil, usageError(fs, usage, "%v", err), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		// The flag package stops at the first argument, or after "--":
		// after "--" every argument is positional.
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError prints what is wrong and the command's usage on stderr, and
// returns the exit code of a usage error.
func usageError(fs *flag.FlagSet, usage, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "coup %s: %s\n\n", fs.Name(), fmt.Sprintf(format, args...))
	printUsage(os.Stderr, fs, usage)
	return verdict.ExitInput
}

// printUsage prints a command's usage and, when it has flags, their
// defaults.
func printUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	fmt.Fprint(w, usage)
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if !has {
		return
	}
	if !strings.HasSuffix(usage, "flags:\n") {
		fmt.Fprint(w, "\nflags:\n")
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
