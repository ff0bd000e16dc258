package main

import (
	"os"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether f is a terminal that can redraw a line: not
// a pipe, a file or /dev/null (as in CI logs), nor TERM=dumb.
func isTerminal(f *os.File) bool {
	return os.Getenv("TERM") != "dumb" && isatty.IsTerminal(f.Fd())
}
