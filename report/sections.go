package report

import (
	"html/template"
	"strings"

	"github.com/coupharness/coup/history"
)

// The page's sections drawn by ops.go and links.go, and its header's
// words for what ran, as templates of the page's own (page.go calls them
// by name; reportTemplate parses them).

const opsTemplate = `<h2 id="operations">Operations</h2>
<p class="key">The clients' operations over time, as Jepsen's latency and rate graphs: above, a dot per completed operation at the time it was invoked and as high as it took (a logarithmic axis), coloured by how it ended and shaped by what it asked; below, the operations completed per second by how they ended, in bins of {{.Bin}}. An operation that timed out is info: it may or may not have happened, and stands at the client's timeout. Yellow bands are the nemesis's faults. Hover over a dot for the client, the node and the time.</p>
<div class="legend">{{.Legend}}</div>
<figure class="ops-plot" id="ops-latency-plot"><figcaption><b>latency</b> — {{if eq .Completed 1}}1 completed operation{{else}}{{.Completed}} completed operations{{end}}{{if .Open}}; {{.Open}} invoked and never completed are not drawn{{end}}{{if .Stray}}; {{.Stray}} completions with no invocation are left out{{end}}</figcaption>
<div class="drawing">{{.Latency}}</div></figure>
{{if .Hidden}}<p class="note">{{.Hidden}} more operations are not drawn: the plot draws 8000 dots.</p>{{end}}
<figure class="ops-plot" id="ops-rate-plot"><figcaption><b>throughput</b> — operations completed per second, by outcome</figcaption>
<div class="drawing">{{.Rate}}</div></figure>
<table id="ops-counts"><tr><th>f</th><th>ok</th><th>fail</th><th>info</th></tr>
{{range .Counts}}<tr><td>{{.F}}</td><td>{{.OK}}</td><td>{{.Fail}}</td><td>{{.Info}}</td></tr>{{end}}</table>
`

const linksTemplate = `<h2 id="links">Links</h2>
<p class="key">What the network between the hosts carried, one row per ordered pair of hosts (a client's connections count on its host's links): a bar per second in the sending host's colour, as tall as the bytes per second the link carried then, on the row's own scale, whose peak and total are written at its right; vermilion stacked on a bar is what a fault dropped. Yellow bands are the nemesis's faults, and a partition is drawn again, stronger, on the rows of the links it cut: a cut link carries nothing, and what a stall held passes at the heal. The servers' messages are bytes on connections, not recorded one by one. Hover over a bar for its counts.</p>
<div class="drawing">{{.SVG}}</div>
<p class="note" id="links-note">{{.Rows}} links carried {{.Bytes}} in all: {{.What}}.{{if .Hidden}} {{.Hidden}} more links are not drawn: the page draws the first 64.{{end}}</p>
`

// runWhat says, for the page's header, what ran: the servers, a foreign
// node (its command, when the history has it), or the built-in algorithm;
// and how many nodes or hosts.
func runWhat(m *history.Meta) template.HTML {
	n := len(m.Nodes)
	count := func(one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return itoa(n) + " " + many
	}
	switch {
	case m.Servers:
		return template.HTML("servers <b>" + esc(m.Algorithm) + "</b> · " + count("host", "hosts"))
	case len(m.Command) > 0 || m.Algorithm == "":
		s := "<b>your node</b>"
		if len(m.Command) > 0 {
			s += " <code>" + esc(short(strings.Join(m.Command, " "), 160)) + "</code>"
		}
		if m.Algorithm != "" {
			s += ", algorithm <b>" + esc(m.Algorithm) + "</b>"
		}
		return template.HTML(s + " · " + count("node", "nodes"))
	}
	return template.HTML("algorithm <b>" + esc(m.Algorithm) + "</b> · " + count("node", "nodes"))
}
