package servers

import (
	"context"

	"github.com/coupharness/coup/scenario"
)

// Host is where one node runs: its server and its sidecars
// (scenario.Sidecar), which start, crash, pause, resume, restart and are
// replaced together, as the processes of one machine are. A run has one
// Host per node and knows it only through this interface: its process
// faults (server.go) call these methods and record what they did, and
// nothing else. localHost runs a host's processes on this machine, held
// as the run's isolation says (isolation.go); a host elsewhere (over
// SSH, in a container) is another implementation, in a file of its own,
// chosen in newHost, and changes none of the callers.
//
// What a host says comes back through its hostEvents: every line its
// processes write (read through their log patterns), and the end of a
// server that exited on its own.
type Host interface {
	// Start writes the node's files and starts its processes, the server
	// first and then each sidecar in order, each once the one it starts
	// after is ready (its ready probe answers); it returns once every one
	// is. It fails, with what was started stopped again, when a process
	// exits first, when the start timeout passes, or when ctx ends.
	Start(ctx context.Context) error
	// Stop ends every process of the host at once (a paused one too,
	// and whatever they forked), waits until all are gone and their
	// output read (or given up on: a pipe held outside the host), and
	// reports whether any was running.
	Stop() bool
	// Pause stops every process of the host at once, and Resume continues
	// them all. Each calls mark once the host can be paused (or resumed)
	// and just before it is, so that the run records the fault before
	// anything the processes write after it.
	Pause(mark func()) error
	Resume(mark func()) error
	// Exec runs a command on the host for its effect (the replace
	// command), its output written to the server's log, and waits for it.
	Exec(ctx context.Context, argv []string) error
	// Wipe removes the node's data folder (a replace).
	Wipe() error
	// Up reports whether the host's server runs.
	Up() bool
	// Incarnation counts the host's starts.
	Incarnation() int
	// Pids lists every process of the host that runs, as pids on this
	// machine (none while it is down): what a clock fault reaches.
	Pids() []int
	// Isolation says what holds the host's processes: "cgroup",
	// "namespace" or "group" (isolation.go).
	Isolation() string
}

// hostEvents are what a host tells its run.
type hostEvents struct {
	// line is a line a process wrote, with the log patterns that read
	// the process's lines, the log's name in the run's folder and the
	// line's number in it.
	line func(patterns []scenario.Pattern, line []byte, file string, n int)
	// starting is told that an incarnation is about to start its first
	// process (nil: nobody asks).
	starting func(inc int)
	// exited is the end of a host whose server exited on its own (of
	// incarnation inc, as detail says); the host is down.
	exited func(inc int, detail string)
	// sidecarExited is the end of a sidecar (by its name) that exited on
	// its own, as detail says; the host runs on without it.
	sidecarExited func(name, detail string)
	// launched is told that a process of the host has just started: what
	// must hold for every process of the host (a clock fault in force) is
	// put into it there, before it has run for long.
	launched func()
	// written is told the files the host wrote into the node's folder
	// before its processes start (nil: nobody asks): on coup's storage
	// layer, they are made durable (disk.go).
	written func(paths []string)
	// logf writes to harness.log; progress there and to the console.
	logf, progress func(format string, args ...any)
}

// newHost is the host of a node: on this machine, as every host is for
// now, held as iso says.
func newHost(node *scenario.ServerNode, sv *scenario.Server, dir string, iso *isolation, ev hostEvents) Host {
	return newLocalHost(node, sv, dir, iso, ev)
}
