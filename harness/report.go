package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"coup/checks"
	"coup/harness/history"
)

// WriteReport writes report.html: one self-contained page (no scripts, no
// external resources) with the verdict, each check's explanation, evidence
// and figures, the run's counts, and a timeline of what every node believed
// and what the nemesis did, for a person who has never seen coup's code.
func WriteReport(w io.Writer, res *Results, h *history.History) error {
	svg, legend := timelineSVG(res, h)
	page := reportPage{Results: res, Meta: &h.Meta, Timeline: template.HTML(svg), Legend: legend}
	for _, name := range res.Order {
		c := res.Checks[name]
		rc := reportCheck{Result: c, Doc: checkDoc(name), Figures: figureRows(c.Figures)}
		for _, e := range c.Evidence {
			rc.Evidence = append(rc.Evidence, evidenceRow{Index: e.Index, Time: secs(e.Time), Kind: string(e.Kind), Node: eventNode(&e), Text: eventText(&e)})
		}
		page.Checks = append(page.Checks, rc)
	}
	page.Stats = statRows(&res.Stats)
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, &page); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteReportFile writes the report to path.
func WriteReportFile(path string, res *Results, h *history.History) error {
	var buf bytes.Buffer
	if err := WriteReport(&buf, res, h); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

type reportPage struct {
	Results  *Results
	Meta     *history.Meta
	Checks   []reportCheck
	Stats    [][2]string
	Timeline template.HTML
	Legend   [][2]string // node, colour
}

type reportCheck struct {
	checks.Result
	Doc      string
	Evidence []evidenceRow
	Figures  []figureRow
}

type evidenceRow struct {
	Index      int64
	Time, Kind string
	Node, Text string
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
		switch {
		case e.What == history.ReportLeader && e.Value == "":
			parts = append(parts, "believes in no leader")
		case e.What == history.ReportLeader && e.Value == e.Node:
			parts = append(parts, "believes it is the leader")
		case e.What == history.ReportLeader:
			parts = append(parts, "believes in "+e.Value)
		default:
			parts = append(parts, "reports "+e.What, e.Value)
		}
	case history.KindProcess:
		parts = append(parts, e.What)
		if e.Incarnation > 0 {
			parts = append(parts, fmt.Sprintf("(incarnation %d)", e.Incarnation))
		}
	case history.KindOp:
		parts = append(parts, e.F, e.Type, "by "+e.Process, e.Value)
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
				row.Value = secs(int64(x))
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
					row[i] = secs(int64(x))
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

func statRows(s *Stats) [][2]string {
	rows := [][2]string{
		{"events", fmt.Sprint(s.Events)},
		{"duration", secs(s.Duration)},
		{"messages sent", fmt.Sprint(s.Messages.Sent)},
		{"messages delivered", fmt.Sprint(s.Messages.Delivered)},
		{"messages dropped", fmt.Sprint(s.Messages.Dropped)},
	}
	add := func(prefix string, m map[string]int64) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rows = append(rows, [2]string{prefix + k, fmt.Sprint(m[k])})
		}
	}
	add("sent: ", s.Messages.ByType)
	add("dropped: ", s.Messages.Drops)
	add("operations: ", s.Ops)
	return rows
}

// The timeline's geometry, in pixels.
const (
	tlWidth  = 960 // the time axis
	tlLeft   = 70  // node names
	tlRight  = 20
	tlTop    = 34 // fault labels and the axis
	tlRow    = 26
	tlBar    = 16
	tlBottom = 40 // the legend
)

// palette colours the leaders, in the order of the meta event's nodes.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#e15759", "#bab0ac"}

// timelineSVG draws, per node, a bar for each span of its life coloured by
// the leader it believed in (tall and outlined where it believed it was
// the leader, grey where it believed in none, hatched while paused, absent
// while down), the nemesis's faults as shaded bands, and each false
// check's interval in red. Spans narrower than a pixel are merged, so the
// picture stays small for long histories.
// It returns the SVG and the legend: each node with its colour.
func timelineSVG(res *Results, h *history.History) (string, [][2]string) {
	tl := checks.BuildTimeline(h)
	end := tl.End
	if end <= 0 {
		end = 1
	}
	x := func(t int64) float64 { return tlLeft + float64(t)/float64(end)*tlWidth }
	height := tlTop + tlRow*len(tl.Nodes) + tlBottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`,
		tlLeft+tlWidth+tlRight, height, tlLeft+tlWidth+tlRight, height)
	b.WriteString(`<defs><pattern id="paused" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#000" fill-opacity="0.35"/></pattern></defs>`)
	rowsTop, rowsBottom := tlTop, tlTop+tlRow*len(tl.Nodes)

	colour := map[string]string{}
	var legend [][2]string
	for i, n := range tl.Nodes {
		colour[n.Name] = palette[i%len(palette)]
		legend = append(legend, [2]string{n.Name, colour[n.Name]})
	}
	leaderColour := func(l string) string {
		if c, ok := colour[l]; ok {
			return c
		}
		return "#555"
	}

	// Faults: shaded bands from start to end, labelled at the top; a fault
	// whose end the history does not record is a line at its start. At most
	// one per pixel column.
	seen := map[int]bool{}
	for _, f := range tl.Faults {
		x0 := x(f.From)
		col := int(x0)
		if seen[col] {
			continue
		}
		seen[col] = true
		label := f.What
		if len(f.Nodes) > 0 {
			label += " " + strings.Join(f.Nodes, ",")
		}
		if f.To < 0 {
			fmt.Fprintf(&b, `<g><title>%s at %s (no end recorded)</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c09000" stroke-width="2" stroke-dasharray="4,2"/>`,
				esc("nemesis: "+label), secs(f.From), x0, rowsTop-4, x0, rowsBottom+4)
		} else {
			x1 := x(f.To)
			fmt.Fprintf(&b, `<g><title>%s from %s to %s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e0b000" fill-opacity="0.15" stroke="#c09000" stroke-dasharray="3,2"/>`,
				esc("nemesis: "+label), secs(f.From), secs(f.To), x0, rowsTop-4, math.Max(x1-x0, 1), rowsBottom-rowsTop+8)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#8a6d00">%s</text></g>`, x0+2, rowsTop-8, esc(label))
	}
	// False checks: their intervals in red.
	for _, name := range res.Order {
		c := res.Checks[name]
		if c.Valid != checks.False || c.Interval == nil {
			continue
		}
		x0, x1 := x(c.Interval.From), x(c.Interval.To)
		fmt.Fprintf(&b, `<g><title>%s: %s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#d00" fill-opacity="0.12" stroke="#d00"/></g>`,
			esc(name), esc(c.Explanation), x0, rowsTop-2, math.Max(x1-x0, 2), rowsBottom-rowsTop+4)
	}
	// Nodes.
	for i, n := range tl.Nodes {
		y := rowsTop + i*tlRow
		mid := y + tlRow/2
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`, tlLeft-8, mid, esc(n.Name))
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`, tlLeft, mid, tlLeft+tlWidth, mid)
		for _, s := range mergeSpans(n.Spans, x) {
			top, hgt, stroke := mid-tlBar/2+3, tlBar-6, ""
			fill := "#d8d8d8"
			what := "believes in no leader"
			if s.Leader != "" {
				fill = leaderColour(s.Leader)
				what = "believes in " + s.Leader
			}
			if s.Leader == n.Name {
				top, hgt, stroke = mid-tlBar/2, tlBar, ` stroke="#000" stroke-width="1"`
				what = "believes it is the leader"
			}
			if s.mixed {
				fill, what = "#999", "changed its belief many times"
			}
			title := fmt.Sprintf("%s %s from %s to %s", n.Name, what, secs(s.From), secs(s.To))
			if s.Paused {
				title += " (paused)"
			}
			fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"%s/>`,
				esc(title), s.x0, top, math.Max(s.x1-s.x0, 1), hgt, fill, stroke)
			if s.Paused {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#paused)"/>`, s.x0, top, math.Max(s.x1-s.x0, 1), hgt)
			}
			b.WriteString(`</g>`)
		}
		cols := map[int]bool{}
		for _, m := range n.Marks {
			mx := x(m.Time)
			if cols[int(mx)] {
				continue
			}
			cols[int(mx)] = true
			title := fmt.Sprintf("%s: %s at %s", n.Name, m.What, secs(m.Time))
			switch m.What {
			case history.ProcCrash, history.ProcExit:
				fmt.Fprintf(&b, `<g><title>%s</title><path d="M%.1f %d l6 6 m0 -6 l-6 6" stroke="#c00" stroke-width="2"/></g>`, esc(title), mx-3, mid-3)
			case history.ProcStart:
				if m.Restart {
					title = fmt.Sprintf("%s: restarted under the same id at %s", n.Name, secs(m.Time))
					fmt.Fprintf(&b, `<g><title>%s</title><path d="M%.1f %d l6 4 l-6 4 z" fill="#070"/></g>`, esc(title), mx, mid-4)
				}
			}
		}
	}
	// The axis and the end of the run.
	ay := rowsBottom + 6
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, tlLeft, ay, tlLeft+tlWidth, ay)
	step := tickStep(end)
	for t := int64(0); t <= end; t += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/><text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`,
			x(t), ay, x(t), ay+4, x(t), ay+16, tickLabel(t, step))
	}
	if tl.RunEnd < tl.End {
		fmt.Fprintf(&b, `<g><title>the harness began stopping the nodes at %s: the end of the run the checks judge</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-dasharray="2,2"/></g>`,
			secs(tl.RunEnd), x(tl.RunEnd), rowsTop-4, x(tl.RunEnd), rowsBottom+4)
	}
	b.WriteString(`</svg>`)
	return b.String(), legend
}

// tickStep returns a round step (1, 2 or 5 times a power of ten
// nanoseconds) that cuts [0, end] into about eight parts.
func tickStep(end int64) int64 {
	raw := float64(end) / 8
	pow := math.Pow(10, math.Floor(math.Log10(math.Max(raw, 1))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return int64(m * pow)
		}
	}
	return int64(10 * pow)
}

// tickLabel formats a tick with as many decimals as its step needs.
func tickLabel(t, step int64) string {
	decimals := 0
	for s := int64(1e9); s > step && decimals < 9; s /= 10 {
		decimals++
	}
	return fmt.Sprintf("%.*fs", decimals, float64(t)/1e9)
}

// drawnSpan is a span as drawn: pixel extent, and mixed when several
// spans of different beliefs share its pixels.
type drawnSpan struct {
	checks.Span
	x0, x1 float64
	mixed  bool
}

// mergeSpans turns a node's spans into at most one rectangle per pixel
// column, merging neighbours of the same belief.
func mergeSpans(spans []checks.Span, x func(int64) float64) []drawnSpan {
	var out []drawnSpan
	for _, s := range spans {
		d := drawnSpan{Span: s, x0: x(s.From), x1: x(s.To)}
		if k := len(out); k > 0 {
			last := &out[k-1]
			touching := last.To == s.From
			same := last.Leader == s.Leader && last.Paused == s.Paused && !last.mixed
			if touching && (same || d.x1-last.x0 < 1) {
				if !same {
					last.mixed = last.Leader != s.Leader || last.mixed
					last.Paused = last.Paused || s.Paused
				}
				last.To, last.x1 = s.To, d.x1
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

func esc(s string) string { return html.EscapeString(s) }

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"secs":    secs,
	"safeCSS": func(s string) template.CSS { return template.CSS(s) },
	"verdictClass": func(v checks.Validity) string {
		return "v-" + v.String()
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>coup: {{.Results.Scenario}} — valid {{.Results.Valid}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.sub { color: #666; }
.badge { display: inline-block; padding: 0.1em 0.6em; border-radius: 0.8em; font-weight: bold; color: #fff; }
.v-true { background: #2e7d32; } .v-false { background: #c62828; } .v-unknown { background: #9e7c00; }
.outcome { font-size: 1.1em; margin: 0.6em 0; }
.check { border: 1px solid #ddd; border-radius: 6px; padding: 0.8em 1em; margin: 1em 0; }
.check h3 { margin: 0 0 0.3em 0; font-size: 1.05em; }
.doc { color: #666; font-size: 0.9em; margin-bottom: 0.5em; }
.explain { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.88em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
details { margin-top: 0.5em; } summary { cursor: pointer; color: #444; }
.notes li { margin: 0.3em 0; }
.legend span { display: inline-block; margin-right: 1.2em; font-size: 0.9em; }
.legend i { display: inline-block; width: 1.2em; height: 0.8em; margin-right: 0.3em; vertical-align: middle; }
.timeline { overflow-x: auto; }
code { font-size: 0.92em; }
</style>
</head>
<body>
<h1>{{.Results.Scenario}}</h1>
<div class="sub">algorithm <b>{{.Results.Algorithm}}</b> · {{len .Meta.Nodes}} nodes · seed {{.Results.Seed}}{{if .Results.File}} · <code>{{.Results.File}}</code>{{end}}</div>
<div class="outcome">Verdict: <span class="badge {{verdictClass .Results.Valid}}">valid = {{.Results.Valid}}</span>
— the scenario expected {{if .Results.Expected.Valid}}a valid run{{else}}a violation{{if .Results.Expected.Violations}} of {{range $i, $v := .Results.Expected.Violations}}{{if $i}}, {{end}}{{$v}}{{end}}{{end}}{{end}},
so the outcome is <b>{{.Results.Outcome}}</b> (exit code {{.Results.ExitCode}}).</div>
{{if not .Results.Complete}}<p><b>The run did not finish:</b> the history has no end event, and only the part that was recorded was checked.</p>{{end}}
{{if .Results.Error}}<p><b>The run failed:</b> {{.Results.Error}}</p>{{end}}
{{if .Results.Notes}}<ul class="notes">{{range .Results.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Results.Skipped}}<p>{{len .Results.Skipped}} line(s) of the history could not be read and were skipped:{{range .Results.Skipped}} line {{.Line}} ({{.Err}});{{end}} the rest was checked.</p>{{end}}

<h2>Timeline</h2>
<p class="sub">One row per node. A bar is a node that is up, coloured by the leader it believes in; a tall outlined bar is a node that believes it is the leader itself; grey is no leader; hatching is a paused node (it keeps its belief); a gap is a node that is down; ✕ is a crash, ▶ a restart under the same id. Yellow bands are the nemesis's faults; red bands are the intervals of failed checks; the dotted line is where the harness began stopping the nodes. Hover over anything for times.</p>
<div class="legend">Believes in: {{range .Legend}}<span><i style="background: {{index . 1 | safeCSS}}"></i>{{index . 0}}</span>{{end}}<span><i style="background: #d8d8d8"></i>no leader</span><span><i style="background: #999"></i>many changes too quick to draw</span></div>
<div class="timeline">{{.Timeline}}</div>

<h2>Checks</h2>
{{range .Checks}}
<div class="check">
<h3><span class="badge {{verdictClass .Valid}}">{{.Valid}}</span> {{.Name}}</h3>
{{if .Doc}}<div class="doc">{{.Doc}}</div>{{end}}
<div class="explain">{{.Explanation}}</div>
{{if .Nodes}}<div>Nodes: {{range $i, $n := .Nodes}}{{if $i}}, {{end}}{{$n}}{{end}}</div>{{end}}
{{if .Interval}}<div>Interval: {{secs .Interval.From}} to {{secs .Interval.To}}</div>{{end}}
{{if .Evidence}}
<table><tr><th>event</th><th>time</th><th>kind</th><th>node</th><th>what</th></tr>
{{range .Evidence}}<tr><td>{{.Index}}</td><td>{{.Time}}</td><td>{{.Kind}}</td><td>{{.Node}}</td><td>{{.Text}}</td></tr>{{end}}
</table>{{end}}
{{if .Figures}}<details><summary>figures</summary><table>
{{range .Figures}}<tr><th>{{.Name}}</th><td>{{if .Head}}<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{else}}{{.Value}}{{end}}</td></tr>{{end}}
</table></details>{{end}}
</div>
{{end}}

<h2>Counts</h2>
<table>{{range .Stats}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
<p class="sub">Times are seconds since the run began. The history (<code>history.jsonl</code>) and the machine-readable results (<code>results.json</code>) are beside this page.</p>
</body>
</html>
`))
