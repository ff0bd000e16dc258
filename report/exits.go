package report

import (
	"fmt"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// A process's own exit (verdict.Exit) is a finding, not a fault, so it has
// a mark of its own: a "!" in a filled circle, where a crash by the
// nemesis is a ✕. The page lists every exit with its status and the end
// of its log, at the top, beside the headline.

// colExit is the colour of an exit's mark: the Okabe–Ito reddish purple,
// apart from the vermilion of violations and crashes.
const colExit = "#CC79A7"

// exitMark draws an exit's mark centred at (x, y), with its title.
func exitMark(x, y float64, title string) string {
	return fmt.Sprintf(`<g class="mark mark-exit"><title>%s</title><circle cx="%.1f" cy="%.1f" r="5.5" fill="%s" stroke="#fff" stroke-width="0.8"/><text x="%.1f" y="%.1f" text-anchor="middle" font-size="9" font-weight="bold" fill="#fff">!</text></g>`,
		esc(title), x, y, colExit, x, y+3.5)
}

// exitTitle is an exit mark's title.
func exitTitle(node string, mk checks.Mark) string {
	if mk.What == history.ProcPartExit {
		return fmt.Sprintf("%s: a process of its host exited on its own at %s (a finding: see the exits above)", node, secs(mk.Time))
	}
	return fmt.Sprintf("%s: exited on its own at %s (a finding: no fault and no end of run caused it)", node, secs(mk.Time))
}

// exitView is one exit, for the page.
type exitView struct {
	Process, When, Status, Log string
	Expected                   bool
}

// exitViews are the run's exits, for the page.
func exitViews(res *verdict.Results) []exitView {
	var out []exitView
	for _, x := range res.Exits {
		out = append(out, exitView{Process: x.Process, When: secs(x.Time), Status: x.Status, Log: strings.Join(x.Log, "\n"), Expected: x.Expected})
	}
	return out
}
