package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
)

// Exit is a process that exited on its own: a node, a server (with its
// host), a sidecar, a client's own process. No fault caused it (a crash,
// a restart and a replace are recorded as what they are) and no end of
// run did (the harness's stop is a stop), so it is a finding of its own:
// a run with an exit the scenario does not expect ([expect] exits) is
// unexpected, whatever its checks say.
type Exit struct {
	// Time is when it was recorded, in nanoseconds since the run began.
	Time int64 `json:"t"`
	// Node is the node it was, or served (a sidecar's host, a client
	// process's host); "" for a client process on no host.
	Node string `json:"node,omitempty"`
	// Process names the process: the node itself, "n1 sidecar
	// sentinel", "client c1".
	Process string `json:"process"`
	// Incarnation is the node's incarnation that exited (a node's own
	// exit), 0 when not known.
	Incarnation int `json:"incarnation,omitempty"`
	// Status is the exit status or the signal, as the operating system
	// gave it ("exit status 1", "signal: segmentation fault"), or how
	// the simulator saw it end ("panic: …").
	Status string `json:"status"`
	// Log is the last lines of its log, made printable.
	Log []string `json:"log,omitempty"`
	// Expected is true when the scenario names its node (or client)
	// among the exits it expects.
	Expected bool `json:"expected"`
}

// exitsOf returns every exit in h before the harness began stopping the
// nodes (its first stop event), in history order, each marked expected
// when expect names its node or process. An exit once the shutdown has
// begun may be the end of the run's doing (a node that exits when its
// peers are gone), so it is no finding.
func exitsOf(h *history.History, expect []string) []Exit {
	var out []Exit
	for e := range h.All() {
		if e.Kind == history.KindProcess && e.What == history.ProcStop {
			break
		}
		if e.Kind != history.KindProcess || (e.What != history.ProcExit && e.What != history.ProcPartExit) {
			continue
		}
		x := Exit{Time: e.Time, Node: e.Node, Process: exitProcess(e), Status: e.Detail, Log: e.Tail}
		if e.What == history.ProcExit {
			x.Incarnation = e.Incarnation
		}
		if x.Status == "" {
			x.Status = "unknown"
		}
		x.Expected = (x.Node != "" && slices.Contains(expect, x.Node)) || (e.Process != "" && slices.Contains(expect, e.Process))
		out = append(out, x)
	}
	return out
}

// exitProcess names the process of an exit event.
func exitProcess(e *history.Event) string {
	switch {
	case e.What == history.ProcExit:
		return e.Node
	case e.Process != "":
		return "client " + e.Process
	case e.Name != "":
		return e.Node + " " + e.Name
	}
	return e.Node
}

// ExitLines say an exit for the console, at once: a sentence ("n2
// exited on its own at 1.360s (exit status 1), which no fault and no end
// of run caused; the end of its log:") and the last lines of its log,
// each "  | line", a line each, since the console writes one line at a
// time. Every string that came from the run passes through Printable.
func ExitLines(e *history.Event) []string {
	x := exitsOf(&history.History{Events: []history.Event{*e}}, nil)
	if len(x) == 0 {
		return nil
	}
	return strings.Split(x[0].line(true), "\n")
}

// line is the exit's sentence, with its log's last lines below when
// withLog.
func (x *Exit) line(withLog bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s exited on its own at %.3fs (%s), which no fault and no end of run caused",
		console.Printable(x.Process), float64(x.Time)/1e9, console.Printable(x.Status))
	if x.Expected {
		b.WriteString("; the scenario expects it ([expect] exits)")
	}
	if !withLog {
		return b.String()
	}
	if len(x.Log) == 0 {
		b.WriteString("; its log is empty")
	} else {
		b.WriteString("; the end of its log:")
		for _, l := range x.Log {
			fmt.Fprintf(&b, "\n    | %s", console.Printable(strings.ReplaceAll(l, "\n", " ")))
		}
	}
	return b.String()
}

// unexpectedExits counts the exits the scenario does not expect.
func (r *Results) unexpectedExits() int {
	n := 0
	for _, x := range r.Exits {
		if !x.Expected {
			n++
		}
	}
	return n
}
