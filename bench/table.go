package bench

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The targets the table marks (✓ met, ✗ not): what coup aims for on a
// two-core machine.
const (
	TargetThroughput         = 0.5              // pipelined, not recorded: this fraction of the relay's round trips/s
	TargetThroughputRecorded = 0.35             // pipelined, every message recorded
	TargetP50                = 1.05             // one at a time: p50 at most this multiple of the relay's
	TargetSteadyP99          = time.Millisecond // steady rate with faults: p99 at most this
	TargetStartupNodes       = 1000             // at this many nodes or more:
	TargetStartup            = 1.5              // every node up within this multiple of the bare start's time
	TargetHarnessPerNode     = 100e3            // and the harness's peak under this many bytes a node
	TargetCheckTime          = time.Second      // coup check on the history: under this
	TargetCheckRSS           = 300e6            // and under this many bytes
	TargetProxyThroughput    = 0.8              // TCP, pipelined: coup's proxy at least this fraction of the forwarder's round trips/s
	TargetProxyP50           = 1.3              // TCP, one at a time: the proxy's p50 at most this multiple of the forwarder's
)

// Print writes the results as tables, one per part that ran.
func (r *Results) Print(w io.Writer) {
	fmt.Fprintf(w, "coup bench: %s/%s, %d cores, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	if len(r.Router) > 0 {
		r.printRouter(w)
	}
	if len(r.Proxy) > 0 {
		r.printProxy(w)
	}
	if len(r.Startup) > 0 {
		r.printStartup(w)
	}
	if len(r.Sim) > 0 {
		r.printSim(w)
	}
	if r.History != nil {
		r.printHistory(w)
	}
	if len(r.Servers) > 0 {
		r.printServers(w)
	}
	if r.Hosts != nil {
		r.printHosts(w)
	}
	if len(r.Episodes) > 0 {
		r.printEpisodes(w)
	}
	if len(r.Explore) > 0 {
		r.printExplore(w)
	}
	if r.Disk != nil {
		r.printDisk(w)
	}
	if len(r.Baseline) > 0 {
		r.printBaseline(w)
	}
}

func (r *Results) printRouter(w io.Writer) {
	var plain, faulty []*Case
	for i := range r.Router {
		if r.Router[i].Faults == nil {
			plain = append(plain, &r.Router[i])
		} else {
			faulty = append(faulty, &r.Router[i])
		}
	}
	head := fmt.Sprintf("two nodes, n1 pings n2, n2 echoes; latency 0; medians of %d rounds, the relay and coup taking turns; (ratio) to the relay", r.Config.Rounds)
	if len(plain) > 0 {
		fmt.Fprintf(w, "\nrouter: %s\n", head)
		printCases(w, plain)
	}
	if len(faulty) > 0 {
		f := faulty[0].Faults
		fmt.Fprintf(w, "\nrouter with faults: %s\n  fault mix on every link: %s\n", head, f)
		fmt.Fprintf(w, "  (a timer set for %s, the mix's mean delay, fires here after %s, p50, and %s, p99, in an idle process)\n",
			f.Delay+f.Jitter/2, formatDuration(float64(r.Timer[0])), formatDuration(float64(r.Timer[1])))
		printCases(w, faulty)
	}
}

// printCases writes one table of probe cases.
func printCases(w io.Writer, cases []*Case) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \trelay\tcoup\tcoup, recorded\ttarget")
	for _, cs := range cases {
		switch cs.Mode() {
		case Pipelined:
			target := ""
			var goal [paths]float64
			if cs.Faults == nil {
				goal = [paths]float64{0, TargetThroughput, TargetThroughputRecorded}
				target = fmt.Sprintf("≥ %g× / ≥ %g×", TargetThroughput, TargetThroughputRecorded)
			}
			row(tw, "  "+cs.Title+": round trips/s", cs, func(f Figures) float64 { return f.Throughput() }, formatRate,
				func(c, relay float64) string { return fmt.Sprintf("%.2f×", c/relay) },
				func(p int, c, relay float64) (bool, bool) { return goal[p] > 0, c >= goal[p]*relay }, target)
			row(tw, "  "+cs.Title+": CPU per message", cs, func(f Figures) float64 { return float64(f.CPUPerMessage()) }, formatDuration,
				func(c, relay float64) string { return formatMultiple(c / relay) }, noTarget, "")
		default:
			for _, q := range []struct {
				name string
				get  func(Figures) float64
			}{{"p50", func(f Figures) float64 { return float64(f.P50) }}, {"p99", func(f Figures) float64 { return float64(f.P99) }}} {
				target := ""
				judge := func(int, float64, float64) (bool, bool) { return false, false }
				switch {
				case cs.Mode() == OneAtATime && cs.Faults == nil && q.name == "p50":
					target = fmt.Sprintf("≤ %g×", TargetP50)
					judge = func(_ int, c, relay float64) (bool, bool) { return true, c <= TargetP50*relay }
				case cs.Mode() == Steady && q.name == "p99":
					target = "≤ " + formatDuration(float64(TargetSteadyP99))
					judge = func(_ int, c, _ float64) (bool, bool) { return true, c <= float64(TargetSteadyP99) }
				}
				ratio := func(c, relay float64) string { return formatMultiple(c / relay) }
				if q.name == "p50" && cs.Mode() == OneAtATime {
					// Judged against 1.05×: two decimals.
					ratio = func(c, relay float64) string { return fmt.Sprintf("%.2f×", c/relay) }
				}
				row(tw, "  "+cs.Title+": round-trip "+q.name, cs, q.get, formatDuration, ratio, judge, target)
			}
		}
		if cs.Faults != nil {
			var cells [paths]string
			for p := range paths {
				var sent, lost, dup int64
				for _, f := range cs.Runs[p] {
					sent, lost, dup = sent+f.Sent, lost+f.Lost, dup+f.Dup
				}
				cells[p] = fmt.Sprintf("%.1f%% / %.1f%%", 100*float64(lost)/float64(max(sent, 1)), 100*float64(dup)/float64(max(sent, 1)))
			}
			fmt.Fprintf(tw, "  %s: pings lost / echoed twice\t%s\t%s\t%s\t\n", cs.Title, cells[Relay], cells[Coup], cells[Recorded])
		}
	}
	tw.Flush()
}

// row writes one measure of a case: the median over rounds on each path,
// coup's with its ratio to the relay's, and a mark where a target applies.
func row(w io.Writer, name string, cs *Case, get func(Figures) float64, format func(float64) string,
	ratio func(c, relay float64) string, judge func(path int, c, relay float64) (applies, met bool), target string) {
	var med [paths]float64
	for p := range paths {
		var xs []float64
		for _, f := range cs.Runs[p] {
			xs = append(xs, get(f))
		}
		med[p] = median(xs)
	}
	cells := []string{name, format(med[Relay])}
	for _, p := range []int{Coup, Recorded} {
		cell := format(med[p])
		if med[Relay] > 0 {
			cell += " (" + ratio(med[p], med[Relay]) + ")"
		}
		if applies, met := judge(p, med[p], med[Relay]); applies {
			cell += " " + mark(met)
		}
		cells = append(cells, cell)
	}
	cells = append(cells, target)
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

func noTarget(int, float64, float64) (bool, bool) { return false, false }

func mark(met bool) string {
	if met {
		return "✓"
	}
	return "✗"
}

func (r *Results) printProxy(w io.Writer) {
	fmt.Fprintf(w, "\nproxy: a TCP client and an echo server, %d-byte messages: direct, through a plain forwarder process, through coup's fault proxy process (no fault in force); medians of %d rounds, the paths taking turns; (ratios) to the forwarder and to direct\n",
		tcpMessage, r.Config.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tdirect\tforwarder\tcoup proxy\ttarget")
	for i := range r.Proxy {
		cs := &r.Proxy[i]
		med := func(get func(Figures) float64) [tcpPaths]float64 {
			var m [tcpPaths]float64
			for p := range tcpPaths {
				var xs []float64
				for _, f := range cs.Runs[p] {
					xs = append(xs, get(f))
				}
				m[p] = median(xs)
			}
			return m
		}
		// cells writes the three paths' medians: the forwarder's with its
		// ratio to direct, the proxy's with its ratios to both.
		cells := func(m [tcpPaths]float64, format func(float64) string, ratio func(float64) string) string {
			ratioTo := func(x, y float64) string {
				if x <= 0 || y <= 0 {
					return ""
				}
				return ratio(x / y)
			}
			fwd := format(m[Forwarder])
			if r := ratioTo(m[Forwarder], m[Direct]); r != "" {
				fwd += " (" + r + " direct)"
			}
			prx := format(m[Proxied])
			if r := ratioTo(m[Proxied], m[Forwarder]); r != "" {
				prx += " (" + r + " forwarder"
				if r := ratioTo(m[Proxied], m[Direct]); r != "" {
					prx += ", " + r + " direct"
				}
				prx += ")"
			}
			return format(m[Direct]) + "\t" + fwd + "\t" + prx
		}
		times := func(x float64) string { return fmt.Sprintf("%.2f×", x) }
		switch cs.Mode {
		case Pipelined:
			m := med(func(f Figures) float64 { return f.Throughput() })
			met := m[Proxied] >= TargetProxyThroughput*m[Forwarder]
			fmt.Fprintf(tw, "  %s: round trips/s\t%s %s\t≥ %g× forwarder\n", cs.Title, cells(m, formatRate, times), mark(met), TargetProxyThroughput)
			m = med(func(f Figures) float64 { return float64(f.CPUPerMessage()) })
			row := cells(m, formatDuration, times)
			// Direct has no carrier whose time to count.
			row = "no carrier" + strings.TrimPrefix(row, formatDuration(m[Direct]))
			if m[Forwarder] == 0 || m[Proxied] == 0 {
				// A carrier's time is read in the kernel's ticks (10ms): a
				// probe too short for one has nothing to divide.
				row = "no carrier\ttoo short to count (CPU comes in 10ms ticks)\t"
			}
			fmt.Fprintf(tw, "  %s: CPU per message\t%s\t\n", cs.Title, row)
		default:
			m := med(func(f Figures) float64 { return float64(f.P50) })
			met := m[Proxied] <= TargetProxyP50*m[Forwarder]
			fmt.Fprintf(tw, "  %s: round-trip p50\t%s %s\t≤ %g× forwarder\n", cs.Title, cells(m, formatDuration, times), mark(met), TargetProxyP50)
			m = med(func(f Figures) float64 { return float64(f.P99) })
			fmt.Fprintf(tw, "  %s: round-trip p99\t%s\t\n", cs.Title, cells(m, formatDuration, times))
		}
	}
	tw.Flush()
}

func (r *Results) printStartup(w io.Writer) {
	fmt.Fprintf(w, "\nstartup: from starting `coup run` to every node answering init; %s election, latency 0; the bare start (n processes of this binary, each told one line and answering one, nothing of coup's) and coup's taking turns, medians of %d; (ratio) to the bare start; peak RSS (VmHWM) while the nodes run\n",
		r.Config.Algorithm, startupRounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  nodes\tbare start\tcoup up in\tharness peak (a node)\tlauncher peak\tnode peak, median\tnode peak, max\tnodes seen\tleft behind\ttarget")
	for _, s := range r.Startup {
		up := s.Up().Round(time.Millisecond).String()
		if s.Ratio() > 0 {
			up += fmt.Sprintf(" (%.2f×)", s.Ratio())
		}
		perNode := float64(s.HarnessPeak()) / float64(max(s.Nodes, 1))
		harness := fmt.Sprintf("%s (%s)", mb(s.HarnessPeak()), kb(perNode))
		target := ""
		if s.Nodes >= TargetStartupNodes {
			up += " " + mark(s.Ratio() > 0 && s.Ratio() <= TargetStartup)
			harness += " " + mark(perNode < TargetHarnessPerNode)
			target = fmt.Sprintf("≤ %g× bare, harness < %s a node", TargetStartup, kb(TargetHarnessPerNode))
		}
		// A node the sweeps missed is missing from the peaks too.
		seen := strconv.Itoa(len(s.NodePeaks()))
		if len(s.NodePeaks()) != s.Nodes {
			seen += " ✗"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d %s\t%s\n", s.Nodes, s.BareUp().Round(time.Millisecond), up, harness,
			mb(s.BarePeak()), mb(s.NodeMedian()), mb(s.NodeMax()), seen, s.LeftBehind(), mark(s.LeftBehind() == 0), target)
	}
	tw.Flush()
}

func (r *Results) printHistory(w io.Writer) {
	h := r.History
	fmt.Fprintf(w, "\nhistory: %s events, %s (%s), generated in %s\n", formatCount(float64(h.Events)), mb(h.Bytes), h.Scenario, h.Generate.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \ttime\tevents/s\tmemory per event\ttarget")
	perEvent := func(b uint64) string { return formatCount(float64(b)/float64(max(h.Events, 1))) + " B" }
	for _, c := range []struct {
		name string
		cost Cost
	}{{"read (in process)", h.Read}, {fmt.Sprintf("read + all %d checks (in process)", h.Checks), h.Check}} {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s live, %s allocated\t\n", c.name, c.cost.Time.Round(time.Millisecond),
			formatRate(float64(h.Events)/c.cost.Time.Seconds()), perEvent(c.cost.Live), perEvent(c.cost.Allocated))
	}
	if h.CoupCheck > 0 {
		fmt.Fprintf(tw, "  coup check (a process)\t%s %s\t%s\tpeak RSS %s %s (%s)\t< %s, < %s\n",
			h.CoupCheck.Round(time.Millisecond), mark(h.CoupCheck < TargetCheckTime),
			formatRate(float64(h.Events)/h.CoupCheck.Seconds()),
			mb(h.CoupCheckPeak), mark(h.CoupCheckPeak < TargetCheckRSS), perEvent(uint64(h.CoupCheckPeak)),
			TargetCheckTime, mb(TargetCheckRSS))
	}
	tw.Flush()
}

// formatRate writes a rate as a whole number with thin groups of three
// digits ("735 000").
func formatRate(x float64) string { return formatCount(x) }

func formatCount(x float64) string {
	s := strconv.FormatInt(int64(x+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatDuration writes nanoseconds with three significant digits at
// most ("5.2µs", "142µs", "1.23ms").
func formatDuration(nsec float64) string {
	switch {
	case nsec <= 0:
		return "-"
	case nsec < 1e3:
		return fmt.Sprintf("%.0fns", nsec)
	case nsec < 1e4:
		return fmt.Sprintf("%.1fµs", nsec/1e3)
	case nsec < 1e6:
		return fmt.Sprintf("%.0fµs", nsec/1e3)
	case nsec < 1e7:
		return fmt.Sprintf("%.2fms", nsec/1e6)
	case nsec < 1e9:
		return fmt.Sprintf("%.1fms", nsec/1e6)
	}
	return fmt.Sprintf("%.2fs", nsec/1e9)
}

// formatMultiple writes a ratio of latencies ("27×", "1.4×").
func formatMultiple(x float64) string {
	if x < 10 {
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.0f×", x)
}
