package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
)

// The links view, for a run of real servers, whose messages are bytes on
// connections and not recorded one by one: one row per ordered pair of
// hosts (src → dest), and in it a bar per period of the network's link
// events (history.KindLink), as tall as the bytes per second the link
// carried then, on the row's own scale (its peak is written on it), with
// the bytes a fault dropped stacked on top in vermilion. The nemesis's
// faults are drawn behind every row, and a partition's cut is drawn again,
// stronger, on the rows of the links it cut: a reader sees a link fall
// silent for as long as it was cut, and the burst of what a stall held
// when it healed.

const (
	lkRow    = 34 // a link's row: its label above its tallest bar
	lkBarMax = 18 // the tallest bar
)

// linkSample is one link event: the span it covers and what it counts.
type linkSample struct {
	from, to                 int64
	bytes, dropped, carriers int64 // carriers: chunks or packets
}

// rate is the sample's bytes (carried, or dropped) per second.
func (s linkSample) rate(bytes int64) float64 {
	span := float64(s.to) - float64(s.from)
	if span <= 0 {
		return 0
	}
	return float64(bytes) / span * 1e9
}

// linkRow is one directed link's samples.
type linkRow struct {
	src, dest string
	samples   []linkSample
	total     int64 // bytes carried in the run
	dropped   int64
	peak      float64 // the highest rate, carried and dropped together
	unit      string  // "chunks" or "packets", as the events count them
}

// lkCols is how many bars a row draws at most: the samples of a longer
// run that begin in one column (two pixels) are merged into one bar.
const lkCols = chWidth / 2

// linkRows gathers the link events of h into one row per directed link, in
// the order of the run's nodes (names that are not nodes after them, by
// name); at most maxRows, the rest counted. The samples of a row that
// begin in the same of lkCols columns of [from, to] are merged.
func linkRows(h *history.History, from, to int64) ([]*linkRow, int) {
	order := map[string]int{}
	for i, n := range h.Meta.Nodes {
		order[n] = i
	}
	rank := func(n string) int {
		if i, ok := order[n]; ok {
			return i
		}
		return len(order)
	}
	byLink := map[[2]string]*linkRow{}
	col := func(t int64) int {
		return int((float64(t) - float64(from)) / (float64(to) - float64(from) + 1) * lkCols)
	}
	lastCol := map[*linkRow]int{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindLink || e.Src == "" || e.Dest == "" {
			continue
		}
		r := byLink[[2]string{e.Src, e.Dest}]
		if r == nil {
			r = &linkRow{src: e.Src, dest: e.Dest}
			byLink[[2]string{e.Src, e.Dest}] = r
		}
		span := max(0, e.Counts[history.LinkSpan])
		s := linkSample{from: clampTime(addTime(e.Time, -span), from, to), to: clampTime(e.Time, from, to),
			bytes: max(0, e.Counts[history.LinkBytes]), dropped: max(0, e.Counts[history.LinkDroppedBytes])}
		switch {
		case e.Counts[history.LinkPackets] > 0:
			s.carriers, r.unit = e.Counts[history.LinkPackets], "packets"
		case e.Counts[history.LinkChunks] > 0:
			s.carriers, r.unit = e.Counts[history.LinkChunks], "chunks"
		}
		r.total += s.bytes
		r.dropped += s.dropped
		if k := len(r.samples) - 1; k >= 0 && lastCol[r] == col(s.from) {
			last := &r.samples[k]
			last.from, last.to = min(last.from, s.from), max(last.to, s.to)
			last.bytes, last.dropped, last.carriers = last.bytes+s.bytes, last.dropped+s.dropped, last.carriers+s.carriers
			continue
		}
		lastCol[r] = col(s.from)
		r.samples = append(r.samples, s)
	}
	for _, r := range byLink {
		for _, s := range r.samples {
			r.peak = math.Max(r.peak, s.rate(s.bytes+s.dropped))
		}
	}
	rows := make([]*linkRow, 0, len(byLink))
	for _, r := range byLink {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b *linkRow) int {
		return cmp.Or(cmp.Compare(rank(a.src), rank(b.src)), cmp.Compare(a.src, b.src),
			cmp.Compare(rank(a.dest), rank(b.dest)), cmp.Compare(a.dest, b.dest))
	})
	if len(rows) > maxRows {
		return rows[:maxRows], len(rows) - maxRows
	}
	return rows, 0
}

// cutSpan is a partition in force: when, and the directed links it cut.
type cutSpan struct {
	from, to int64
	label    string
	cut      map[[2]string]bool
}

// partitionCuts reads the links each partition cut from its nemesis
// events: the detail names its sides ("n3 | n1 n2 (stall)"), one way or
// with a bridge where it says so. A partition whose detail names no sides
// of the run's nodes (a majorities ring) is drawn as every fault is,
// behind the rows, and not on them. A partition with no end recorded is
// in force to the end of the window.
func partitionCuts(h *history.History, to int64) []cutSpan {
	nodes := map[string]bool{}
	for _, n := range h.Meta.Nodes {
		nodes[n] = true
	}
	open := map[string]*cutSpan{}
	var out []cutSpan
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindNemesis || e.What != "partition" {
			continue
		}
		key := e.Name
		if key == "" {
			key = e.Detail
		}
		switch e.Phase {
		case history.PhaseStart:
			if cut := cutLinks(e.Detail, nodes); cut != nil {
				open[key] = &cutSpan{from: e.Time, to: -1, label: "partition " + e.Detail, cut: cut}
			}
		case history.PhaseEnd:
			if c := open[key]; c != nil {
				c.to = e.Time
				out = append(out, *c)
				delete(open, key)
			}
		}
	}
	keys := make([]string, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := open[k]
		c.to = to
		out = append(out, *c)
	}
	return out
}

// cutLinks reads a partition's detail: the directed links it cuts, or nil
// when it names no sides of nodes.
func cutLinks(detail string, nodes map[string]bool) map[[2]string]bool {
	sides := detail
	if i := strings.IndexAny(sides, "(;"); i >= 0 {
		sides = sides[:i]
	}
	if !strings.Contains(sides, "|") {
		return nil
	}
	var groups [][]string
	for _, part := range strings.Split(sides, "|") {
		g := strings.Fields(part)
		for _, n := range g {
			if !nodes[n] {
				return nil
			}
		}
		groups = append(groups, g)
	}
	cut := map[[2]string]bool{}
	between := func(a, b []string) {
		for _, x := range a {
			for _, y := range b {
				if x != y {
					cut[[2]string{x, y}] = true
				}
			}
		}
	}
	switch {
	case strings.Contains(detail, "the first side cannot reach the rest"):
		for _, g := range groups[1:] {
			between(groups[0], g)
		}
	case strings.Contains(detail, "the rest cannot reach the first side"):
		for _, g := range groups[1:] {
			between(g, groups[0])
		}
	case strings.Contains(detail, "(bridge") && len(groups) == 3:
		between(groups[0], groups[2])
		between(groups[2], groups[0])
	default:
		for i := range groups {
			for j := range groups {
				if i != j {
					between(groups[i], groups[j])
				}
			}
		}
	}
	return cut
}

// linksView is the links section, for the page.
type linksView struct {
	SVG template.HTML
	// Rows counts the links drawn, Hidden those left out past maxRows;
	// Bytes is every link's bytes together (drawn or not), exactly and
	// in words, and What says what they are.
	Rows, Hidden int
	Bytes        string
	What         string
}

// linkTotal is the bytes every link event of h counts as carried, and
// what carried them ("packets" or "chunks"; "" when no event says).
func linkTotal(h *history.History) (bytes int64, unit string) {
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != history.KindLink || e.Src == "" || e.Dest == "" {
			continue
		}
		bytes += max(0, e.Counts[history.LinkBytes])
		switch {
		case e.Counts[history.LinkPackets] > 0:
			unit = "packets"
		case e.Counts[history.LinkChunks] > 0 && unit == "":
			unit = "chunks"
		}
	}
	return bytes, unit
}

// linkBytesWhat says what a links view's bytes are, by what carried
// them: coup's network counts whole IP packets, as the counts' "network:
// bytes delivered" does; the proxies count the streams' payload.
func linkBytesWhat(unit string) string {
	switch unit {
	case "packets":
		return "whole IP packets, headers included, as coup's network delivered them (duplicates included): the same bytes as the counts' network: bytes delivered"
	case "chunks":
		return "the payload of the connections' streams, as coup's proxies passed it on (no TCP or IP header)"
	}
	return "as the link events count them"
}

// linksSection draws the links view, or returns nil when the history has
// no link event.
func (m *reportModel) linksSection() *linksView {
	rows, hidden := linkRows(m.h, m.from, m.to)
	if len(rows) == 0 {
		return nil
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.src + "→" + r.dest
	}
	total, unit := linkTotal(m.h)
	ax := newAxis(m.from, m.to, chLeft, chWidth)
	c := newChart(ax, names, lkRow)
	c.open("links", "links-svg")
	c.faults(m.tl.Faults, m.h.Meta.Nodes, 0.2)
	c.rowLabels(false)
	cuts := partitionCuts(m.h, m.to)
	for i, r := range rows {
		base := float64(c.top+(i+1)*lkRow) - 3
		// A line between the links of one source and the next's.
		if i > 0 && rows[i-1].src != r.src {
			c.printf(`<line x1="4" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>`, c.top+i*lkRow, ax.right(), c.top+i*lkRow)
		}
		c.printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, chLeft, base, ax.right(), base)
		for _, cs := range cuts {
			if !cs.cut[[2]string{r.src, r.dest}] || !ax.overlaps(cs.from, cs.to) {
				continue
			}
			x0, x1 := ax.x(cs.from), ax.x(cs.to)
			c.printf(`<g class="cut" data-link="%s"><title>%s→%s cut from %s to %s (%s)</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s" fill-opacity="0.55" stroke="%s"/></g>`,
				esc(names[i]), esc(r.src), esc(r.dest), secs(cs.from), secs(cs.to), esc(cs.label), x0, base-lkBarMax-1, math.Max(x1-x0, 1), lkBarMax+1, colNemesis, colNemesisStroke)
		}
		st, _ := m.styleOfNode(r.src)
		c.printf(`<g class="link" data-link="%s" data-bytes="%d">`, esc(names[i]), r.total)
		for _, s := range r.samples {
			if !ax.overlaps(s.from, s.to) || r.peak <= 0 {
				continue
			}
			x0, x1 := ax.x(s.from), ax.x(s.to)
			w := math.Max(x1-x0-0.5, 1)
			h := s.rate(s.bytes) / r.peak * lkBarMax
			d := s.rate(s.dropped) / r.peak * lkBarMax
			title := fmt.Sprintf("%s→%s from %s to %s: %s (%s/s)", r.src, r.dest, secs(s.from), secs(s.to), byteCount(s.bytes), byteCount(int64(s.rate(s.bytes))))
			if s.carriers > 0 {
				title += " in " + plural(s.carriers, strings.TrimSuffix(r.unit, "s"))
			}
			if s.dropped > 0 {
				title += fmt.Sprintf("; %s dropped by a fault", byteCount(s.dropped))
			}
			c.printf(`<g class="sample"><title>%s</title>`, esc(title))
			if s.bytes > 0 {
				c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x0, base-math.Max(h, 1), w, math.Max(h, 1), st.colour)
			}
			if s.dropped > 0 {
				c.printf(`<rect class="dropped" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x0, base-h-math.Max(d, 1), w, math.Max(d, 1), colViolation)
			}
			c.printf(`</g>`)
		}
		c.printf(`</g>`)
		label := "peak " + byteCount(int64(r.peak)) + "/s · " + byteCount(r.total)
		if r.dropped > 0 {
			label += " · " + byteCount(r.dropped) + " dropped"
		}
		// Above the row's tallest bar, never on one: the row has room
		// for the label over its bars.
		c.printf(`<text class="peak" x="%.1f" y="%.1f" text-anchor="end" font-size="9" fill="#555" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, ax.right()-2, base-lkBarMax-3, esc(label))
	}
	c.axisTicks()
	return &linksView{SVG: template.HTML(c.close()), Rows: len(rows) + hidden, Hidden: hidden,
		Bytes: fmt.Sprintf("%d bytes (%s)", total, byteCount(total)), What: linkBytesWhat(unit)}
}

// plural says a count with its noun: "1 packet", "2 packets".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byteCount says a number of bytes for a person: 512 B, 3.4 kB, 12 MB.
func byteCount(n int64) string {
	f := float64(n)
	switch {
	case f >= 1e9:
		return trimOne(f/1e9) + " GB"
	case f >= 1e6:
		return trimOne(f/1e6) + " MB"
	case f >= 1e3:
		return trimOne(f/1e3) + " kB"
	}
	return fmt.Sprintf("%d B", n)
}

// trimOne formats f with one decimal below 10, none above.
func trimOne(f float64) string {
	if f < 10 {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
	}
	return fmt.Sprintf("%.0f", f)
}
