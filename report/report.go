package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// WriteReport writes report.html: one self-contained page (no network, no
// external resources) for a person who has never seen coup's code: the
// verdict; a timeline of what every node believed and what the nemesis
// did; every short violation magnified; the clients' operations over
// time (latency and throughput); a space-time diagram of the messages with
// preset windows, or for real servers the bytes on each link; the lock's
// lanes for a mutex run; the
// metrics the nodes reported, over time; each check's explanation,
// evidence and figures, with links to the files the checks made; the
// run's counts. Everything is drawn in inline SVG and readable without
// scripts; one small inline script lets a reader draw a window of the
// diagram of their own. Every time is saturated to the run (see axis), so
// no history, however crafted, makes it loop or grow without bound.
func Write(w io.Writer, res *verdict.Results, h *history.History) error {
	m := newReportModel(res, h)
	page := reportPage{Results: res, Meta: &h.Meta, Defs: template.HTML(globalDefs(m))}
	page.Timeline = template.HTML(m.timelineSVG())
	items := append(m.legend(), legendItem{Name: "no leader", CSS: colNoLeader})
	if h.Meta.Servers { // only a real server's belief can be unknown
		items = append(items, legendItem{Name: "? not known (a poll failed or timed out)", CSS: colUnknown})
	}
	page.Legend = legendHTML(append(items, legendItem{Name: "many changes too quick to draw", CSS: colMixed}))
	page.Hidden = m.hidden
	page.Zooms = m.zoomViews()
	page.What = runWhat(&h.Meta)
	page.Ops = m.opsSection()
	if !m.fl.Recorded {
		page.Links = m.linksSection() // a real servers' run: bytes on links in place of messages
	}
	page.MessagesNote = m.messagesNote()
	if page.MessagesNote == "" {
		page.Windows = m.spacetimeWindows()
		page.WindowCSS = windowCSS(len(page.Windows))
		page.TypeLegend = legendHTML(m.typeLegend())
		page.Data = m.scriptJSON()
		page.Script = template.JS(reportScript)
		page.Unmatched = m.fl.Unmatched
		page.FlightsOmitted, page.FlightsKept = m.fl.Omitted, len(m.fl.List)
	}
	page.Metrics, page.MetricsLeftOut, page.MetricsUnreadable = m.metricPlots()
	page.Mutex = m.mutexLanes()
	page.Lost = lostWritesView(res)
	page.Exits = exitViews(res)
	page.Disk = diskRows(m.h)
	for _, name := range res.Order {
		c := res.Checks[name]
		rc := reportCheck{Result: c, Doc: checkDoc(name), Figures: figureRows(c.Figures), Anchor: "check-" + anchor(name)}
		for _, e := range c.Evidence {
			rc.Evidence = append(rc.Evidence, evidenceRow{Index: e.Index, Time: secs(e.Time), Kind: string(e.Kind), Node: eventNode(&e), Text: eventText(&e), Read: readings(e.Evidence)})
			rc.Readings = rc.Readings || len(e.Evidence) > 0
		}
		for _, v := range m.violations {
			if v.check != name {
				continue
			}
			if v.zoom && rc.Zoom == "" {
				rc.Zoom = v.id
			}
			if len(c.Violations) > 1 {
				rc.Violations = append(rc.Violations, newViolationRow(v, c.Violations[v.nth-1]))
			}
		}
		page.Checks = append(page.Checks, rc)
		page.Files = append(page.Files, c.Files...)
	}
	page.Stats = statRows(&res.Stats, h.Meta.Servers)
	var buf bytes.Buffer
	if err := reportTemplate().Execute(&buf, &page); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteReportFile writes the report to path.
func WriteFile(path string, res *verdict.Results, h *history.History) error {
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type reportPage struct {
	Results  *verdict.Results
	Meta     *history.Meta
	Defs     template.HTML // the definitions every drawing uses
	Checks   []reportCheck
	Stats    [][2]string
	Timeline template.HTML
	Legend   template.HTML
	// Hidden counts the nodes not drawn (past maxRows).
	Hidden int
	Zooms  []zoomView
	// MessagesNote says why there is no space-time diagram; Windows are
	// its preset windows otherwise, WindowCSS the rules that show the
	// chosen one, Data and Script what lets a reader draw another.
	MessagesNote string
	// FlightsOmitted counts the copies after the FlightsKept first, which
	// the diagram does not draw (checks.MaxFlights).
	FlightsOmitted, FlightsKept int
	Windows                     []stWindow
	WindowCSS                   template.CSS
	TypeLegend                  template.HTML
	Data                        template.JS
	Script                      template.JS
	Unmatched                   int
	// Metrics are the metric plots; the other two count the metrics left
	// out past maxMetrics and the values that were not numbers.
	Metrics           []metricPlot
	MetricsLeftOut    int
	MetricsUnreadable int
	Mutex             *mutexView
	// Lost is the lost-writes section, for a run judged by lost-writes.
	Lost *lostView
	// Disk is what the storage faults did, a line each (disk.go).
	Disk []diskRow
	// Files are the documents the checks made, beside the page.
	Files []checks.File
	// What says what ran, for the header (runWhat); Ops is the
	// operations section, for a run with clients (ops.go); Links the
	// links view, for a run whose network recorded link events and no
	// messages (links.go).
	What  template.HTML
	Ops   *opsView
	Links *linksView
	// Exits are the processes that exited on their own.
	Exits []exitView
}

type reportCheck struct {
	checks.Result
	Anchor string
	Zoom   string // the anchor of its first magnified view, if any
	// Violations are its violations, one row each, when it lists more
	// than one (the fields above are the first's).
	Violations []violationRow
	Doc        string
	Evidence   []evidenceRow
	// Readings is true when an event of Evidence was read from a real
	// server (its table then has a column for what it was read from).
	Readings bool
	Figures  []figureRow
}

type evidenceRow struct {
	Index      int64
	Time, Kind string
	Node, Text string
	// Read is what the event was read from on a real server, a reading
	// each (evidence.go).
	Read []string
}

// figureRow is one figure: a name and a value in words, or a table.
type figureRow struct {
	Name  string
	Value string
	Head  []string
	Rows  [][]string
}

func checkDoc(name string) string {
	if c, ok := checks.Lookup(name); ok {
		return c.Doc
	}
	return ""
}

// secs formats a history time: "1.203s".
func secs(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

func eventNode(e *history.Event) string {
	switch {
	case e.Node != "":
		return e.Node
	case e.Src != "" || e.Dest != "":
		return e.Src + "→" + e.Dest
	case len(e.Nodes) > 0:
		return strings.Join(e.Nodes, ", ")
	}
	return ""
}

// eventText says what an event is, in a few words.
func eventText(e *history.Event) string {
	var parts []string
	switch e.Kind {
	case history.KindReport:
		if e.What != history.ReportLeader {
			parts = append(parts, "reports "+e.What, e.Value)
			break
		}
		switch {
		case e.Value == "" && e.Detail == history.LeaderUnknown:
			return "its belief is not known (a poll failed or timed out): no claim"
		case e.Value == "":
			parts = append(parts, "believes in no leader")
		case e.Value == e.Node:
			parts = append(parts, "believes it is the leader")
		default:
			parts = append(parts, "believes in "+e.Value)
		}
		if e.Term != nil {
			parts = append(parts, fmt.Sprintf("in term %d", *e.Term))
		}
	case history.KindProcess:
		parts = append(parts, e.What)
		if e.Incarnation > 0 {
			parts = append(parts, fmt.Sprintf("(incarnation %d)", e.Incarnation))
		}
	case history.KindOp:
		parts = append(parts, e.F, e.Type, "by "+e.Process, short(e.Value, maxOpValue))
		if e.Token != nil {
			parts = append(parts, fmt.Sprintf("fencing token %d", *e.Token))
		}
	case history.KindNemesis:
		parts = append(parts, e.What, e.Phase)
	case history.KindMsg:
		parts = append(parts, e.What, e.MType)
		if e.Msg != 0 {
			parts = append(parts, fmt.Sprintf("message %d", e.Msg))
		}
		parts = append(parts, e.Reason)
		if e.Body != "" {
			parts = append(parts, "body "+e.Body)
		}
	default:
		parts = append(parts, e.What, e.Value)
	}
	if e.Detail != "" {
		parts = append(parts, "("+e.Detail+")")
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// figureRows renders figures: times (names ending in _ns) in seconds, lists
// of objects as tables, everything else as JSON.
func figureRows(f map[string]any) []figureRow {
	names := make([]string, 0, len(f))
	for k := range f {
		names = append(names, k)
	}
	sort.Strings(names)
	var rows []figureRow
	for _, name := range names {
		b, err := json.Marshal(f[name])
		if err != nil {
			continue
		}
		var v any
		_ = json.Unmarshal(b, &v)
		row := figureRow{Name: name}
		switch x := v.(type) {
		case []any:
			row.Head, row.Rows = table(x)
			if row.Head == nil {
				row.Value = string(b)
			}
		case float64:
			if strings.HasSuffix(name, "_ns") {
				row.Value = secs(floatTime(x))
			} else {
				row.Value = string(b)
			}
		case string:
			row.Value = x
		default:
			row.Value = string(b)
		}
		rows = append(rows, row)
	}
	return rows
}

// table turns a list of objects into a head and rows, or nil.
func table(list []any) ([]string, [][]string) {
	keys := map[string]bool{}
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, nil
		}
		for k := range m {
			keys[k] = true
		}
	}
	var head []string
	for k := range keys {
		head = append(head, k)
	}
	sort.Strings(head)
	var rows [][]string
	for _, it := range list {
		m := it.(map[string]any)
		row := make([]string, len(head))
		for i, k := range head {
			switch x := m[k].(type) {
			case nil:
			case string:
				row[i] = x
			case float64:
				if strings.HasSuffix(k, "_ns") {
					row[i] = secs(floatTime(x))
				} else {
					row[i] = fmt.Sprint(x)
				}
			default:
				b, _ := json.Marshal(x)
				row[i] = string(b)
			}
		}
		rows = append(rows, row)
	}
	return head, rows
}

// maxOpValue bounds the value of an operation in an evidence row (a read
// of a whole set may hold thousands of elements): the page folds what is
// long (fold), and cuts what is longer still.
const maxOpValue = maxFolded - 200

// maxStatRows bounds each list of counts in the report.
const maxStatRows = 50

// statRows are the Counts table's rows. A run of real servers (servers)
// has no messages, only bytes on links and packets: its rows of
// messages are left out when they count none.
func statRows(s *verdict.Stats, servers bool) [][2]string {
	rows := [][2]string{
		{"events", fmt.Sprint(s.Events)},
		{"duration", secs(s.Duration)},
	}
	m := &s.Messages
	if !servers || m.Sent+m.Delivered+m.Dropped > 0 {
		rows = append(rows, [][2]string{
			{"messages sent", fmt.Sprint(m.Sent)},
			{"messages delivered", fmt.Sprint(m.Delivered)},
			{"messages dropped", fmt.Sprint(m.Dropped)},
		}...)
	}
	// A node can send any number of distinct types: each list shows the
	// largest counts, up to maxStatRows, and sums the rest.
	add := func(prefix string, m map[string]int64) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if len(keys) <= maxStatRows || m[keys[i]] == m[keys[j]] {
				return keys[i] < keys[j]
			}
			return m[keys[i]] > m[keys[j]]
		})
		var rest, restN int64
		for i, k := range keys {
			if i >= maxStatRows {
				rest, restN = rest+m[k], restN+1
				continue
			}
			rows = append(rows, [2]string{prefix + short(k, 60), fmt.Sprint(m[k])})
		}
		if restN > 0 {
			rows = append(rows, [2]string{fmt.Sprintf("%s%d more kinds", prefix, restN), fmt.Sprint(rest)})
		}
	}
	add("sent: ", s.Messages.ByType)
	add("dropped: ", s.Messages.Drops)
	add("operations: ", s.Ops)
	add("refused: ", s.Refused)
	if n := s.Counts[history.CountFaultsSkipped]; n > 0 {
		rows = append(rows, [2]string{"faults skipped (no target)", fmt.Sprint(n)})
	}
	if n := s.Counts[history.CountFaultsUnfired]; n > 0 {
		rows = append(rows, [2]string{"faults never fired (a trigger nothing set off)", fmt.Sprint(n)})
	}
	rows = append(rows, pollRows(s.Polls)...)
	for _, d := range []struct{ key, label string }{
		{history.CountDiskLostBytes, "disk: bytes lost to power failures (not synced)"},
		{history.CountDiskLostFiles, "disk: files that lost writes"},
		{history.CountDiskFlips, "disk: bits flipped"},
	} {
		if n, ok := s.Counts[d.key]; ok {
			rows = append(rows, [2]string{d.label, fmt.Sprint(n)})
		}
	}
	if _, ok := s.Counts[history.CountLinkConns]; ok {
		for _, l := range []struct{ key, label string }{
			{history.CountLinkConns, "links: connections through coup's proxies"},
			{history.CountLinkResets, "links: reset by a fault"},
			{history.CountLinkRefused, "links: refused (a refusing cut, or a server not listening yet)"},
			{history.CountLinkHeld, "links: chunks held (stall, loss, delay)"},
			{history.CountLinkCorrupted, "links: chunks corrupted"},
			{history.CountLinkUnattributed, "links: unattributed, reset"},
			{history.CountLinkUnattributedOpen, "links: unattributed, open at the end"},
		} {
			rows = append(rows, [2]string{l.label, fmt.Sprint(s.Counts[l.key])})
		}
	}
	if _, ok := s.Counts[history.CountNetPackets]; ok {
		for _, l := range []struct{ key, label string }{
			{history.CountNetPackets, "network: packets delivered by coup's network"},
			{history.CountNetBytes, "network: bytes delivered (whole IP packets, headers included: the links view's bytes)"},
			{history.CountNetCut, "network: packets dropped by a stalled cut"},
			{history.CountNetRefused, "network: packets refused (a reset or an ICMP unreachable)"},
			{history.CountNetLost, "network: packets lost"},
			{history.CountNetDelayed, "network: packets delayed"},
			{history.CountNetDuplicated, "network: packets duplicated"},
			{history.CountNetCorrupted, "network: packets corrupted"},
		} {
			rows = append(rows, [2]string{l.label, fmt.Sprint(s.Counts[l.key])})
		}
	}
	return rows
}

// pollRows are the polls' counts, one row per node (up to maxStatRows).
func pollRows(polls map[string]verdict.PollStats) [][2]string {
	var rows [][2]string
	for i, node := range slices.Sorted(maps.Keys(polls)) {
		if i == maxStatRows {
			rows = append(rows, [2]string{"polls: more nodes", fmt.Sprint(len(polls) - maxStatRows)})
			break
		}
		p := polls[node]
		rows = append(rows, [2]string{"polls of " + short(node, 60) + ": answered, unanswered within the timeout, failed, rounds skipped (down)",
			fmt.Sprintf("%d, %d, %d, %d", p.Answered, p.Unanswered, p.Failed, p.Skipped)})
	}
	return rows
}
