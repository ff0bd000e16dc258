package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// clockBand is a node's clocks under a clock fault: from its start on
// the node to its end there (or to another clock fault's start, or a
// reset), with what coup read back of the node's processes meanwhile.
type clockBand struct {
	node     string
	from, to int64
	fault    string // the occurrence, "faults[0]#1"
	detail   string // the fault's, "rate 4; for 8s"
	seen     []string
	skew     string // the last skew seen, "+24.004s"
}

// clockBands reads each node's clock bands from the history's clock
// faults and clock events; a band still open at the end runs to end.
func clockBands(h *history.History, end int64) []clockBand {
	open := map[string]*clockBand{}
	var out []*clockBand
	close := func(node string, t int64) {
		if b := open[node]; b != nil {
			b.to = t
			delete(open, node)
		}
	}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindNemesis && e.What == string(nemesis.Clock):
			for _, node := range e.Nodes {
				close(node, e.Time)
				if e.Phase == history.PhaseStart && !strings.HasPrefix(e.Detail, "reset") {
					b := &clockBand{node: node, from: e.Time, to: -1, fault: e.Name, detail: e.Detail}
					open[node] = b
					out = append(out, b)
				}
			}
		case e.Kind == history.KindClock:
			for _, b := range out {
				if b.node == e.Node && b.fault == e.Name {
					b.seen = append(b.seen, fmt.Sprintf("at %s: %s %s", secs(e.Time), e.What, e.Detail))
					if e.What == history.ClockSeen {
						b.skew = e.Value
					}
				}
			}
		}
	}
	bands := make([]clockBand, 0, len(out))
	for _, b := range out {
		if b.to < 0 {
			b.to = end
		}
		bands = append(bands, *b)
	}
	sort.SliceStable(bands, func(i, j int) bool { return bands[i].from < bands[j].from })
	return bands
}

// drawClocks draws each node's clock bands as a strip along the bottom of
// its row, labelled with the last skew its processes were seen to read.
func (m *reportModel) drawClocks(c *chart) {
	row := map[string]int{}
	for i, n := range m.nodes {
		row[n] = i
	}
	for _, b := range clockBands(m.h, m.to) {
		i, ok := row[b.node]
		if !ok || !c.ax.overlaps(b.from, b.to) {
			continue
		}
		x0, x1 := c.ax.x(b.from), c.ax.x(b.to)
		y := c.mid(i) + tlBar/2 + 1
		title := fmt.Sprintf("%s's clocks from %s to %s: %s (%s)", b.node, secs(b.from), secs(b.to), b.detail, b.fault)
		if len(b.seen) > 0 {
			title += "\n" + strings.Join(b.seen, "\n")
		} else {
			title += "\nnothing read back (a built-in node's timers, or no process up)"
		}
		w := math.Max(x1-x0, 1)
		c.printf(`<g class="clock-band"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="3" fill="%s"/>`, esc(title), x0, y, w, colNemesisStroke)
		label := "clock " + b.detail
		if d, err := time.ParseDuration(b.skew); err == nil {
			label = "clock " + signedRound(d)
		}
		if i := strings.Index(label, ";"); i > 0 {
			label = label[:i]
		}
		if w >= float64(6*len(label)) {
			c.printf(`<text x="%.1f" y="%.1f" font-size="9" fill="%s">%s</text>`, x0+2, y+10, colNemesisText, esc(label))
		}
		c.printf(`</g>`)
	}
}

// signedRound writes a skew to the millisecond, with its sign.
func signedRound(d time.Duration) string {
	d = d.Round(time.Millisecond)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}
