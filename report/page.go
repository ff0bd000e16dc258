package report

import (
	"fmt"
	"html/template"
	"strings"
	"sync"

	"github.com/coupharness/coup/checks"
)

// windowCSS shows the pane of the chosen preset window (and the reader's
// own, which the script adds): radio buttons and CSS, so that choosing a
// window needs no script.
func windowCSS(n int) template.CSS {
	var rules []string
	for i := range n {
		rules = append(rules, fmt.Sprintf("#stw-%d:checked ~ #stp-%d", i, i))
	}
	rules = append(rules, "#stw-custom:checked ~ #stp-custom")
	return template.CSS(strings.Join(rules, ",\n") + " { display: block; }")
}

// reportTemplate is the page's template, parsed when a first page is
// written: every coup process (a node too) would parse it at its start
// otherwise, the largest part of the binary's initialisation.
var reportTemplate = sync.OnceValue(func() *template.Template {
	t := template.Must(template.New("report").Funcs(template.FuncMap{
		"secs": secs,
		"fold": fold,
		"dur":  dur,
		"verdictClass": func(v checks.Validity) string {
			return "v-" + v.String()
		},
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>coup: {{.Results.Scenario}} — valid {{.Results.Valid}}{{if .Meta.Simulated}} (simulated){{end}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05em; }
.sub { color: #555; }
.badge { display: inline-block; padding: 0.1em 0.6em; border-radius: 0.8em; font-weight: bold; color: #fff; }
.v-true { background: #2e7d32; } .v-false { background: #c62828; } .v-unknown { background: #8a6d00; }
.sim { background: #332288; }
.outcome { font-size: 1.1em; margin: 0.6em 0; }
.toc { font-size: 0.92em; } .toc a { margin-right: 1em; }
.check { border: 1px solid #ddd; border-radius: 6px; padding: 0.8em 1em; margin: 1em 0; }
.check h3 { margin: 0 0 0.3em 0; }
.doc { color: #555; font-size: 0.9em; margin-bottom: 0.5em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.88em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
details { margin-top: 0.5em; } summary { cursor: pointer; color: #444; }
.notes li, .warnings li { margin: 0.3em 0; }
.legend { margin: 0.3em 0; }
.legend .item { display: inline-block; margin-right: 1.2em; font-size: 0.9em; }
.legend i { display: inline-block; width: 1.4em; height: 0.8em; margin-right: 0.3em; vertical-align: middle; border: 1px solid #0003; }
.legend svg { vertical-align: middle; margin-right: 0.3em; }
.drawing { overflow-x: auto; }
svg text { font-family: sans-serif; }
svg text.row { font-size: 11px; }
pre.log { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 0.85em; }
.zoom-view { border-left: 4px solid #D55E00; padding-left: 0.8em; margin: 1em 0; }
.windows > input { position: absolute; opacity: 0; pointer-events: none; }
.windows > label { display: inline-block; padding: 0.15em 0.7em; margin: 0 0.3em 0.4em 0; border: 1px solid #999; border-radius: 1em; cursor: pointer; font-size: 0.9em; }
.windows > label[hidden] { display: none; }
.windows > input:checked + label { background: #222; color: #fff; border-color: #222; }
.windows > input:focus-visible + label { outline: 2px solid #0072B2; }
.windows > .pane { display: none; }
{{.WindowCSS}}
.note { color: #444; font-size: 0.92em; margin: 0.3em 0; }
.key { font-size: 0.9em; color: #444; }
td.bad { color: #c62828; font-weight: bold; }
a.file { font-weight: bold; }
code { font-size: 0.92em; }
body { overflow-wrap: break-word; }
code, .explain, .note, .notes li, .sub, figcaption, td.v, details.fold, .folded { overflow-wrap: anywhere; }
table { max-width: 100%; }
details.fold { display: inline; margin: 0; }
details.fold > summary { color: inherit; }
details.fold[open] > summary .fold-more { display: none; }
.fold-more { color: #0072B2; font-size: 0.9em; white-space: nowrap; }
.folded { max-height: 24em; overflow-y: auto; border-top: 1px dotted #bbb; margin-top: 0.2em; padding-top: 0.2em; }
.ops-plot { margin: 0.6em 0; }
.reading { font-family: ui-monospace, monospace; font-size: 0.85em; overflow-wrap: anywhere; }
.reading + .reading { margin-top: 0.3em; }
</style>
</head>
<body>
{{.Defs}}
<h1>{{.Results.Scenario}}</h1>
<div class="sub">{{.What}} · seed {{.Results.Seed}}{{if .Results.File}} · <code>{{.Results.File}}</code>{{end}}
{{if .Meta.Simulated}} · <span class="badge sim" id="simulated" title="run by the deterministic simulator on a virtual clock, not by real processes; coup sim FILE --seed {{.Results.Seed}} replays it">simulated, seed {{.Results.Seed}}</span>{{end}}</div>
<div class="outcome">Verdict: <span class="badge {{verdictClass .Results.Valid}}">valid = {{.Results.Valid}}</span>
— {{.Results.Expectation}}{{.Results.ExitsText}},
so the outcome is <b>{{.Results.Outcome}}</b> (exit code {{.Results.ExitCode}}).</div>
{{if and (not .Results.Complete) (not .Results.Unstarted)}}<p><b>The run did not finish:</b> the history has no end event, and only the part that was recorded was checked.</p>{{end}}
{{if .Results.Error}}<p><b>The run failed:</b> {{.Results.Error}}</p>{{end}}
{{if .Results.Warnings}}<ul class="warnings">{{range .Results.Warnings}}<li><b>Warning:</b> {{.}}</li>{{end}}</ul>{{end}}
{{if .Results.Notes}}<ul class="notes">{{range .Results.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Results.Unstarted}}<p id="unstarted"><b>Nothing ran:</b> the run's nodes did not all start, so no history was recorded beyond the run's description and why it stopped; there is nothing to draw or judge. <code>harness.log</code>, beside this page, says what coup did.</p>
{{else}}{{if .Exits}}<h2 id="exits">Process exits</h2>
<p class="key">Each process that exited on its own: no fault and no end of run caused it, so it is a finding of its own, marked ! in its node's row below. A run with an exit its scenario does not expect ([expect] exits) is not as expected, whatever the checks say.</p>
<table class="exits"><tr><th>process</th><th>time</th><th>status</th><th>expected</th><th>the end of its log</th></tr>
{{range .Exits}}<tr><td>{{.Process}}</td><td>{{.When}}</td><td>{{.Status}}</td><td>{{if .Expected}}yes ([expect] exits){{else}}no: a finding{{end}}</td><td>{{if .Log}}<pre class="log">{{.Log}}</pre>{{else}}(empty){{end}}</td></tr>{{end}}
</table>{{end}}
{{if .Results.Skipped}}<p>{{len .Results.Skipped}} line(s) of the history could not be read and were skipped:{{range .Results.Skipped}} line {{.Line}} ({{.Err}});{{end}} the rest was checked.</p>{{end}}
<nav class="toc">On this page: {{if .Exits}}<a href="#exits">process exits</a>{{end}}<a href="#timeline">timeline</a>{{if .Zooms}}<a href="#magnified">magnified violations</a>{{end}}{{if .Ops}}<a href="#operations">operations</a>{{end}}{{if .Links}}<a href="#links">links</a>{{else}}<a href="#messages">messages</a>{{end}}{{if .Mutex}}<a href="#lock">lock lanes</a>{{end}}{{if .Lost}}<a href="#lost-writes">lost writes</a>{{end}}{{if .Metrics}}<a href="#metrics">metrics</a>{{end}}<a href="#checks">checks</a><a href="#counts">counts</a>{{range .Files}}<a class="file" href="{{.Name}}">{{.Name}}</a>{{end}}</nav>

<h2 id="timeline">Timeline</h2>
<p class="key">One row per node. A bar is a node that is up, coloured by the leader it believes in and, where it fits, labelled with that leader's name; a tall outlined bar is a node that believes it is the leader itself; grey is no leader; white with a dashed outline and ? is a belief not known (a real server's poll failed or timed out: no claim); hatching is a paused node (it keeps its belief); a gap is a node that is down; ✕ is a crash, ▶ a restart under the same id, ! in a circle a process's own exit (a finding, not a fault). Yellow bands are the nemesis's faults, and a dark strip under a node's row is its clocks under a clock fault, labelled with the skew its processes were last seen to read; red outlines are the violations of failed checks, each outlined on its own; the dotted line is where the harness began stopping the nodes. Hover over anything for times, and over a real server's belief for the log line or poll answer it was read from.</p>
<div class="legend">Believes in: {{.Legend}}</div>
<div class="drawing">{{.Timeline}}</div>
{{if .Hidden}}<p class="note">{{.Hidden}} more nodes are not drawn: the page draws the first 64.</p>{{end}}

{{if .Zooms}}<h2 id="magnified">Magnified violations</h2>
<p class="key">Each failed check whose interval is too short to see on the run's axis, drawn again on an axis of its own: the beliefs as in the timeline, with the messages of that window as arrows over them, and the interval outlined in red.</p>
{{range .Zooms}}<figure class="zoom-view" id="{{.ID}}" data-check="{{.Check}}" data-from="{{.From}}" data-to="{{.To}}">
<figcaption>{{.Caption}}</figcaption>
<div class="drawing">{{.SVG}}</div>
{{if .Lanes}}<div class="note">The lock's lanes in the same window (the clients and nodes with something in it):</div><div class="drawing">{{.Lanes}}</div>{{end}}
</figure>{{end}}{{end}}

{{with .Ops}}{{template "operations" .}}{{end}}

{{if .Links}}{{template "links" .Links}}{{else}}<h2 id="messages">Messages</h2>
{{if .MessagesNote}}<p class="note" id="messages-note">{{.MessagesNote}}</p>{{else}}
<p class="key">A space-time diagram: one line per node (solid while up, hatched while paused, dotted while down), time to the right. An arrow is a message from its send to its delivery, coloured and labelled by its type; a dashed stub ending in a red ✕ is a dropped message, drawn mid-way when the network lost it and near the receiver when that was down; a ringed end is a corrupted message its receiver rejected, a red diamond one it did not reject; a dotted arrow is a duplicate. Yellow bands are the nemesis's faults, red outlines the intervals of failed checks, the dashed line GST. Hover for details; choose a window below.</p>
<div class="legend">Types: {{.TypeLegend}}</div>
{{if .FlightsOmitted}}<p class="note" id="messages-omitted">The diagram draws the run's first {{.FlightsKept}} copies of messages; the {{.FlightsOmitted}} after them are counted in the table above, not drawn.</p>{{end}}
<div class="windows" id="spacetime-windows">
{{range $i, $w := .Windows}}<input type="radio" name="stw" id="stw-{{$i}}"{{if $w.Default}} checked{{end}}><label for="stw-{{$i}}">{{$w.Label}}</label>
{{end}}<input type="radio" name="stw" id="stw-custom" disabled><label for="stw-custom" id="stl-custom" hidden>your window</label>
<p class="note" id="spacetime-hint" hidden>Drag across a diagram to draw that window, or click for an eighth of it around the click; the page's address then holds the window, to share.</p>
{{range $i, $w := .Windows}}<div class="pane" id="stp-{{$i}}"><p class="note">{{$w.Note}}</p><div class="drawing">{{$w.SVG}}</div></div>
{{end}}<div class="pane drawing" id="stp-custom"></div>
</div>
{{if .Unmatched}}<p class="note">{{.Unmatched}} deliveries or drops have no send in the history (it was cut short or damaged, or they are real servers' connections reset or refused by a fault); they are drawn with no length.</p>{{end}}
<script type="application/json" id="coup-data">{{.Data}}</script>
<script>{{.Script}}</script>
{{end}}{{end}}

{{with .Mutex}}<h2 id="lock">Lock lanes</h2>
<p class="key">One lane per client. A dotted bar is a client waiting for an acquire, a thick bar a client holding the lock by its own account (from its acquire's ok until it asked to release), a thin bar a release on its way; ✕ ends a request that failed, ? one that timed out or had no answer; hatching over a client's lane is its process paused by the nemesis. The lane "held by 2+" is red wherever two or more clients held the lock at once; below it, each node's lane shows when it said it was in the critical section.{{range $.Files}} Porcupine's step-by-step view of the lock history: <a class="file" href="{{.Name}}">{{.Name}}</a>.{{end}}</p>
<div class="drawing">{{.SVG}}</div>
{{if .Hidden}}<p class="note">{{.Hidden}} more clients are not drawn: the page draws the first 64.</p>{{end}}
{{end}}

{{with .Lost}}<h2 id="lost-writes">Lost writes</h2>
<p class="key">What became of every {{if eq .Workload "lin-kv"}}write and compare-and-set{{else}}add{{end}}, by the final reads after the heal (the check <a href="#check-lost-writes">lost-writes</a>, <span class="badge {{verdictClass .Valid}}">{{.Valid}}</span>): an acknowledged write is lost when no final read made after its acknowledgement has it{{if eq .Workload "lin-kv"}} and no other write of its key may have come after it{{end}}; one that was not acknowledged (it timed out, or failed) but is read there anyway was recovered.</p>
<table id="lost-counts">{{range .Counts}}<tr><th>{{.What}}</th><td{{if .Class}} class="{{.Class}}"{{end}}>{{.N}}</td></tr>{{end}}</table>
{{if .Windows}}<p class="note">When the lost writes were acknowledged, and by which nodes (lost writes less than a second apart are one window), with the nemesis's faults in force then or begun within a second after:</p>
<table id="lost-windows"><tr><th>from</th><th>to</th><th>for</th><th>lost</th><th>acknowledged by</th><th>faults</th></tr>
{{range .Windows}}<tr><td>{{.From}}</td><td>{{.To}}</td><td>{{.Span}}</td><td>{{.Lost}}</td><td>{{.Nodes}}</td><td>{{.Faults}}</td></tr>{{end}}</table>{{end}}
{{if .Lost}}<p class="note" id="lost-named">Lost: {{range $i, $l := .Lost}}{{if $i}}, {{end}}<span title="{{$l.Process}} at {{$l.Node}}">{{$l.Write}}</span>{{end}}{{if .More}} and {{.More}} more{{end}}.</p>{{end}}
{{end}}

{{if .Disk}}<h2 id="disk">Storage faults</h2>
<p class="key">What each power failure lost (the writes not synced, each file's last synced offset, the directory entries undone) and what each corruption altered, on each node's disk, as its disk event in the history says.</p>
<table id="disk-events"><tr><th>time</th><th>node</th><th>fault</th><th>what</th><th>detail</th></tr>
{{range .Disk}}<tr><td>{{.Time}}</td><td>{{.Node}}</td><td>{{.Fault}}</td><td>{{.What}}</td><td>{{.Detail}}</td></tr>{{end}}</table>
{{end}}

{{if .Metrics}}<h2 id="metrics">Metrics</h2>
<p class="key">What the nodes reported about themselves over time, one plot per metric and one step line per node (the value holds until the node reports the next). The dashed line is the global stabilisation time (GST) when the scenario has one; the green dotted line is when eventual-leadership found every correct node trusting the same one for good.</p>
{{range .Metrics}}<figure class="metric-plot" id="{{.ID}}"><figcaption><b>{{.Name}}</b> — {{.Caption}}</figcaption>
<div class="legend">{{.Legend}}</div>
<div class="drawing">{{.SVG}}</div></figure>
{{end}}
{{if .MetricsLeftOut}}<p class="note">{{.MetricsLeftOut}} more metrics are not drawn: the page draws 12.</p>{{end}}
{{if .MetricsUnreadable}}<p class="note">{{.MetricsUnreadable}} reported values were not numbers and are not drawn.</p>{{end}}
{{end}}

<h2 id="checks">Checks</h2>
{{range .Checks}}{{$c := .}}
<div class="check" id="{{.Anchor}}">
<h3><span class="badge {{verdictClass .Valid}}">{{.Valid}}</span> {{.Name}}</h3>
{{if .Doc}}<div class="doc">{{.Doc}}</div>{{end}}
<div class="explain">{{.Explanation}}</div>
{{if .Files}}<div>See {{range $i, $f := .Files}}{{if $i}}, {{end}}<a class="file" href="{{$f.Name}}">{{$f.Name}}</a>{{end}}, written beside this page.</div>{{end}}
{{if .Nodes}}<div>Nodes: {{range $i, $n := .Nodes}}{{if $i}}, {{end}}{{$n}}{{end}}</div>{{end}}
{{if .Interval}}<div>Interval: {{secs .Interval.From}} to {{secs .Interval.To}}{{if .Zoom}} (<a href="#{{.Zoom}}">magnified</a>){{end}}</div>{{end}}
{{if .Violations}}<details class="violations" open><summary>{{.ViolationCount}} violations, {{dur .ViolationTime}} in all{{if gt .ViolationCount (len .Violations)}} ({{len .Violations}} listed: the first, and the longest){{end}}; the evidence below is the first's</summary>
<table><tr><th>#</th><th>from</th><th>to</th><th>length</th><th>nodes</th><th>what happened</th><th>evidence (events)</th></tr>
{{range .Violations}}<tr class="violation-row"><td>{{.Nth}}</td><td>{{.From}}</td><td>{{.To}}{{if .Zoom}} (<a href="#{{.Zoom}}">magnified</a>){{end}}</td><td>{{.Length}}</td><td>{{.Nodes}}</td><td>{{.Text}}</td><td>{{.Evidence}}{{range .Read}}<div class="reading">{{fold .}}</div>{{end}}</td></tr>{{end}}
</table></details>{{end}}
{{if .Evidence}}
<table class="evidence"><tr><th>event</th><th>time</th><th>kind</th><th>node</th><th>what</th>{{if .Readings}}<th>read from</th>{{end}}</tr>
{{range .Evidence}}<tr><td>{{.Index}}</td><td>{{.Time}}</td><td>{{.Kind}}</td><td>{{.Node}}</td><td class="v">{{fold .Text}}</td>{{if $c.Readings}}<td class="v">{{range .Read}}<div class="reading">{{fold .}}</div>{{end}}</td>{{end}}</tr>{{end}}
</table>{{end}}
{{if .Figures}}<details><summary>figures</summary><table>
{{range .Figures}}<tr><th>{{.Name}}</th><td class="v">{{if .Head}}<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td class="v">{{fold .}}</td>{{end}}</tr>{{end}}</table>{{else}}{{fold .Value}}{{end}}</td></tr>{{end}}
</table></details>{{end}}
</div>
{{end}}

<h2 id="counts">Counts</h2>
<table>{{range .Stats}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
<p class="sub">Times are seconds since the run began{{if .Meta.Simulated}}, on the simulator's virtual clock{{end}}. The history (<code>history.jsonl</code>) and the machine-readable results (<code>results.json</code>) are beside this page.</p>
{{end}}
</body>
</html>
`))
	template.Must(t.New("operations").Parse(opsTemplate))
	template.Must(t.New("links").Parse(linksTemplate))
	return t
})
