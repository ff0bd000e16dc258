package checks

import "github.com/coupharness/coup/history"

// Result is what one check says about one history.
type Result struct {
	// Name is the check's name, such as "two-leaders".
	Name string `json:"name"`
	// Valid is the verdict.
	Valid Validity `json:"valid"`
	// Explanation is one sentence a person can act on. It is always set when
	// Valid is False or Unknown, and may be set when it is True.
	Explanation string `json:"explanation,omitempty"`
	// Nodes are the nodes the verdict is about.
	Nodes []string `json:"nodes,omitempty"`
	// Interval is the span of time the verdict is about, if any.
	Interval *Interval `json:"interval,omitempty"`
	// Evidence is the smallest set of events that shows the verdict, in
	// history order.
	Evidence []history.Event `json:"evidence,omitempty"`
	// Violations are every violation a check with intervals found, each
	// with its own nodes, interval, evidence and sentence, in the order
	// they began (at most MaxViolations, the longest kept among them);
	// the fields above are the first's. ViolationCount counts them all,
	// listed or not, and ViolationTime is the time, in nanoseconds, at
	// least one of them covered. Empty when the check found none, or
	// has no intervals.
	Violations     []Violation `json:"violations,omitempty"`
	ViolationCount int         `json:"violation_count,omitempty"`
	ViolationTime  int64       `json:"violation_time_ns,omitempty"`
	// Figures are optional numbers, such as counts, keyed by snake_case names.
	Figures map[string]any `json:"figures,omitempty"`
	// Files are documents the check made for people, such as a
	// visualisation of the evidence. The harness writes each into the
	// run's folder under its name; results.json lists the names.
	Files []File `json:"files,omitempty"`
}

// File is a document a check made: a base name and its content.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"-"`
}

// Interval is a span of history time, in nanoseconds since the run began.
type Interval struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// figure sets a figure, making the map if needed.
func (r *Result) figure(name string, v any) {
	if r.Figures == nil {
		r.Figures = map[string]any{}
	}
	r.Figures[name] = v
}
