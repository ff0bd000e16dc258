package report

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/verdict"
)

// lostView is the lost-writes section: what became of every write, the
// windows in which the lost ones were acknowledged, and the first lost
// writes by name; read from the check's figures alone, so that results
// read back from results.json draw the same.
type lostView struct {
	Valid       checks.Validity
	Explanation string
	Workload    string
	Counts      []lostCount
	Windows     []lostWindowRow
	Lost        []lostRow
	// More counts the lost writes the figures do not name.
	More int
}

type lostCount struct {
	What  string
	N     int
	Class string // "bad" for a count that makes the check false
}

type lostWindowRow struct {
	From, To, Span string
	Lost           int
	Nodes, Faults  string
}

type lostRow struct {
	Write, Process, Node string
}

// lostFigures are the figures of lost-writes the section reads (see
// checks.lostJudgement.figures).
type lostFigures struct {
	Workload    string `json:"workload"`
	FinalReads  int    `json:"final_reads"`
	Acked       int    `json:"acknowledged"`
	Lost        int    `json:"acknowledged_lost"`
	Present     int    `json:"acknowledged_present"`
	Divergent   int    `json:"acknowledged_divergent"`
	Overwritten *int   `json:"acknowledged_overwritten"`
	Unjudged    int    `json:"unjudged"`
	Recovered   int    `json:"recovered"`
	FailedSeen  int    `json:"failed_present"`
	Absent      int    `json:"unacknowledged_absent"`
	Unexpected  int    `json:"unexpected"`
	Windows     []struct {
		From   int64  `json:"from_ns"`
		To     int64  `json:"to_ns"`
		Lost   int    `json:"lost"`
		Nodes  string `json:"nodes"`
		Faults string `json:"faults"`
	} `json:"lost_windows"`
	Named []struct {
		Key     *int64 `json:"key"`
		Value   int64  `json:"value"`
		Process string `json:"process"`
		Node    string `json:"node"`
	} `json:"lost"`
}

// lostWritesView is the section, or nil when the run has no lost-writes
// result with figures.
func lostWritesView(res *verdict.Results) *lostView {
	c, ok := res.Checks["lost-writes"]
	if !ok || c.Figures == nil {
		return nil
	}
	b, err := json.Marshal(c.Figures)
	if err != nil {
		return nil
	}
	var f lostFigures
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	v := &lostView{Valid: c.Valid, Explanation: c.Explanation, Workload: f.Workload}
	bad := func(n int) string {
		if n > 0 {
			return "bad"
		}
		return ""
	}
	v.Counts = []lostCount{
		{"acknowledged and lost", f.Lost, bad(f.Lost)},
		{"acknowledged and present", f.Present, ""},
		{"unacknowledged and present (recovered)", f.Recovered, ""},
		{"unacknowledged and absent", f.Absent, ""},
		{"acknowledged, missing from some final reads only", f.Divergent, ""},
	}
	if f.Overwritten != nil {
		v.Counts = append(v.Counts, lostCount{"acknowledged and overwritten by a later write", *f.Overwritten, ""})
	}
	v.Counts = append(v.Counts,
		lostCount{"acknowledged after the final reads began (not judged)", f.Unjudged, ""},
		lostCount{"read but never written", f.Unexpected, bad(f.Unexpected)},
		lostCount{"final reads", f.FinalReads, ""},
	)
	if f.FailedSeen > 0 {
		v.Counts[2].What += fmt.Sprintf(", %d of them after a definite failure", f.FailedSeen)
	}
	for _, w := range f.Windows {
		row := lostWindowRow{From: secs(w.From), To: secs(w.To), Lost: w.Lost, Nodes: w.Nodes, Faults: w.Faults}
		row.Span = secs(w.To - w.From)
		v.Windows = append(v.Windows, row)
	}
	for _, n := range f.Named {
		w := strconv.FormatInt(n.Value, 10)
		if n.Key != nil {
			w = fmt.Sprintf("key %d = %d", *n.Key, n.Value)
		}
		v.Lost = append(v.Lost, lostRow{Write: w, Process: n.Process, Node: n.Node})
	}
	v.More = max(0, f.Lost-len(v.Lost))
	return v
}
