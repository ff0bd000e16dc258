package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// TargetZooRatio is the most guided's runs to a first violation may be,
// over the zoo, as a fraction of random's (the geometric mean of the
// bugs' ratios).
const TargetZooRatio = 0.33

func (r *Results) printExplore(w io.Writer) {
	fmt.Fprintf(w, "\nexplore: the bug zoo (%s), random against guided; runs to a first violation (the run that showed it counted) and wall time to it, medians of the campaigns (seeds 1 to N); a campaign that does not find the bug counts as its budget (missed)\n", r.Config.ZooDir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  bug\tdriver\tcampaigns\tbudget\trandom runs\trandom time\tguided runs\tguided time\tguided/random")
	allFound := true
	for _, c := range r.Explore {
		cell := func(s int) string {
			v := fmt.Sprintf("%g", medianInt(c.Runs[s]))
			if c.Missed[s] > 0 {
				v += fmt.Sprintf(" (%d missed)", c.Missed[s])
			}
			return v
		}
		if c.Missed[1] > 0 {
			allFound = false
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d runs\t%s\t%s\t%s\t%s\t%.2g\n", strings.TrimPrefix(c.Scenario, "zoo-"), c.Driver, len(c.Runs[0]), c.Bug.Budget,
			cell(0), roundWall(medianDuration(c.Wall[0])), cell(1), roundWall(medianDuration(c.Wall[1])), c.Ratio())
	}
	tw.Flush()
	mark := "✗"
	ratio := ZooRatio(r.Explore)
	if ratio <= TargetZooRatio {
		mark = "✓"
	}
	fmt.Fprintf(w, "  guided/random runs to a first violation over the zoo (geometric mean of %d bugs' ratios): %.2f  (target ≤ %.2f %s)\n", len(r.Explore), ratio, TargetZooRatio, mark)
	found := "yes ✓"
	if !allFound {
		found = "no ✗"
	}
	fmt.Fprintf(w, "  guided found every bug within its budget in every campaign: %s\n", found)
}

func roundWall(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
