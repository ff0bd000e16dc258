package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func (r *Results) printServers(w io.Writer) {
	fmt.Fprintf(w, "\nservers: three real servers on loopback, from the start to the first server claiming leadership; medians of %d rounds, the paths taking turns; (ratio) with coup to without\n",
		r.Config.Rounds)
	fmt.Fprintln(w, "  without coup: the preset's command lines and files, every peer at its own address; from just before the first server starts")
	fmt.Fprintln(w, "  with coup: servers.Run, a fault proxy on every link, no fault; from the run's beginning (harness.log), proxies included")
	fmt.Fprintf(w, "  etcd: its own \"elected leader\" line, read as written; ZooKeeper: \"Mode: leader\" from srvr, asked every %s on both paths (coup's preset asks every 100ms)\n",
		serverPoll)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \twithout coup\twith coup\t")
	for _, c := range r.Servers {
		name := "  " + c.Kind + ", 3 servers: start to leader"
		if c.Skipped != "" {
			fmt.Fprintf(tw, "%s\tnot measured: %s\t\t\n", name, c.Skipped)
			continue
		}
		var med [serverPaths]time.Duration
		var cells [serverPaths]string
		for p := range serverPaths {
			med[p] = medianDuration(c.Runs[p])
			cells[p] = formatDuration(float64(med[p]))
			if len(c.Runs[p]) > 1 {
				cells[p] += " [" + spread(c.Runs[p]) + "]"
			}
			if n := len(c.Failed[p]); n > 0 {
				cells[p] += fmt.Sprintf(" (%d of %d rounds: no leader within %s)", n, n+len(c.Runs[p]), c.Bound)
			}
		}
		if med[Bare] > 0 && med[WithCoup] > 0 {
			cells[WithCoup] = fmt.Sprintf("%s (%.2f×)", cells[WithCoup], float64(med[WithCoup])/float64(med[Bare]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", name, cells[Bare], cells[WithCoup])
		if c.Clamped > 0 {
			fmt.Fprintf(tw, "  %s: %d of coup's rounds saw the claim before every server was up; their time is an upper bound\t\t\t\n", c.Kind, c.Clamped)
		}
	}
	tw.Flush()
}

// medianDuration is the median of ds (0 for none).
func medianDuration(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// spread writes the rounds' least and greatest times ("1.02s–1.31s"), or
// the one time.
func spread(ds []time.Duration) string {
	lo, hi := slices.Min(ds), slices.Max(ds)
	if lo == hi {
		return formatDuration(float64(lo))
	}
	return strings.Join([]string{formatDuration(float64(lo)), formatDuration(float64(hi))}, "–")
}
