package report

import "github.com/coupharness/coup/history"

// diskRow is one storage fault's effect on a node's disk, as its disk
// event says: a line each.
type diskRow struct {
	Time, Node, Fault, What, Detail string
}

// diskRows are the history's disk events (what power failures lost, what
// corruptions flipped), in order.
func diskRows(h *history.History) []diskRow {
	var out []diskRow
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == history.KindDisk {
			out = append(out, diskRow{Time: secs(e.Time), Node: e.Node, Fault: e.Name, What: e.What, Detail: short(e.Detail, 2000)})
		}
	}
	return out
}
