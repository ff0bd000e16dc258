package report

import (
	"strings"

	"github.com/coupharness/coup/checks"
)

// A check with intervals lists every violation it found
// (checks.Result.Violations): the timeline outlines each, the first few
// short ones are magnified, and the check's section has a row for each,
// with its nodes, interval, sentence and evidence's events, and what those
// were read from on real servers.

// violationRow is one violation in its check's section.
type violationRow struct {
	Nth      int
	From, To string
	Length   string
	Nodes    string
	Text     string
	Zoom     string // the anchor of its magnified view, if any
	Evidence string // the indexes of its evidence's events
	// Read is what its evidence's events were read from on real
	// servers: "event 4: n1.etcd.log:57: …", a reading each.
	Read []string
}

// newViolationRow is the row of v, the check's violation cv.
func newViolationRow(v violation, cv checks.Violation) violationRow {
	r := violationRow{Nth: v.nth, From: secs(cv.Interval.From), To: secs(cv.Interval.To), Length: dur(cv.Length()),
		Nodes: strings.Join(cv.Nodes, ", "), Text: cv.Explanation}
	if v.zoom {
		r.Zoom = v.id
	}
	var idx []string
	for _, e := range cv.Evidence {
		idx = append(idx, itoa(int(e.Index)))
		for _, rd := range readings(e.Evidence) {
			r.Read = append(r.Read, "event "+itoa(int(e.Index))+": "+rd)
		}
	}
	r.Evidence = strings.Join(idx, ", ")
	return r
}
