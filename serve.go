package coup

import (
	"fmt"
	"io"
	"os"

	"github.com/coupharness/coup/nodes/process"
)

// Serve runs node's machine as a real node process: it speaks coup's node
// protocol (docs/protocol.md) on stdin and stdout, keeps the machine's
// timers on the real clock, checks message sums, and logs on stderr, as
// coup's built-in node program does. So a scenario whose command is the
// program below runs the machine under coup run, with real processes and
// every fault:
//
//	func main() { coup.Serve(mymachine.Node) }
//
// Serve returns when stdin ends; when the node cannot go on (a bad Node,
// an init it must refuse, an output it cannot write) it says why on
// stderr and exits with status 1.
func Serve(node Node) {
	if err := serve(node, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "coup: %v\n", err)
		os.Exit(1)
	}
}

// serve is Serve on any streams.
func serve(node Node, in io.Reader, out, log io.Writer) error {
	spec, err := node.spec()
	if err != nil {
		return err
	}
	return process.Run(process.Options{In: in, Out: out, Log: log, Spec: spec})
}
