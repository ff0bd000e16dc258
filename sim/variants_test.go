package sim

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/nodes"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// variant is a deliberately broken algorithm in a scenario, for measuring
// how soon each strategy finds its failure: the scenario (src) with the
// algorithm replaced by spec when set, and fixed, the same scenario with
// the algorithm or its parameters right (empty: none; the bug is the
// algorithm's own).
type variant struct {
	name  string
	src   string
	spec  *nodes.Spec
	fixed string
}

// bullyShortT is bully whose T (2·t_trans + t_process = 5.8ms) is a
// little shorter than the longest round trip the network allows (2·3ms):
// an answer can come too late, and the election then ends with two
// coordinators. Only when both legs of a round trip are nearly as slow as
// the jitter allows.
const bullyShortT = `algorithm = "bully"
nodes = 5
duration = "1s"
recovery = "300ms"
[params]
t_trans = "%s"
t_process = "0ms"
probe_every = "100ms"
[network]
latency = "2ms"
jitter = "1ms"
[workload]
kind = "election"
initiators = ["all"]
at = "100ms"
`

// omegaFixed is Ω with eventually timely links whose timeout (20.98ms,
// just above η = 20ms) hardly grows (by 1ns per wrong suspicion): after
// GST a heartbeat that comes a little later than the one before makes a
// node suspect the leader, and leadership never settles. The right
// algorithm grows the timeout by a step (5ms) after each wrong suspicion,
// which the losses before GST give it plenty of.
const omegaFixed = `algorithm = "omega-etc"
nodes = 4
duration = "1s"
recovery = "300ms"
[params]
eta = "20ms"
timeout = "20980us"
step = "%s"
[network]
latency = "2ms"
jitter = "1ms"
[workload]
kind = "none"
[[faults]]
kind = "loss"
probability = 0.5
[[faults]]
kind = "timely"
at = "400ms"
delta = "10ms"
[checks]
run = ["eventual-leadership", "agreement", "validity", "termination"]
stabilisation = "200ms"
`

// centralisedCollect is centralised mutual exclusion whose new
// coordinator waits collect = 3.8ms before its first grant, less than the
// round trip of its announcement and a holder's answer (up to 4ms): when
// the coordinator crashes while a client holds the lock, and the holder's
// declaration is slow, the lock is granted twice. The right wait is T.
const centralisedCollect = `algorithm = "centralised"
nodes = 5
duration = "1s"
recovery = "600ms"
[params]
probe_every = "20ms"
%s
[network]
latency = "1ms"
jitter = "1ms"
[workload]
kind = "mutex"
clients = 3
targets = ["n1", "n2", "n3"]
rate = 40
hold = "100ms"
timeout = "600ms"
[[faults]]
kind = "crash"
target = "leader"
at = "300ms"
when = { report = "cs", value = "enter" }
[checks]
progress = "600ms"
`

// raWorkload is Ricart–Agrawala on 3 nodes whose clients ask often enough
// for two requests to carry the same Lamport timestamp now and then.
const raWorkload = `algorithm = "ricart-agrawala"
nodes = 3
duration = "1s"
recovery = "600ms"
[network]
latency = "1ms"
jitter = "500us"
[workload]
kind = "mutex"
clients = 3
rate = 30
hold = "10ms"
timeout = "500ms"
`

// crRing is Chang–Roberts on a ring of 6 with two initiators, judged on
// its message bound as well.
const crRing = `algorithm = "chang-roberts"
nodes = 6
ids = [3, 6, 1, 5, 2, 4]
duration = "500ms"
recovery = "300ms"
[network]
latency = "1ms"
jitter = "1ms"
[workload]
kind = "election"
initiators = ["n1", "n4"]
at = "10ms"
[checks]
run = ["two-leaders", "agreement", "validity", "termination", "complexity"]
`

var variants = []variant{
	{name: "bully-short-T", src: fmt.Sprintf(bullyShortT, "2900us"), fixed: fmt.Sprintf(bullyShortT, "3ms")},
	{name: "omega-fixed-timeout", src: fmt.Sprintf(omegaFixed, "1ns"), fixed: fmt.Sprintf(omegaFixed, "5ms")},
	{name: "centralised-short-collect", src: fmt.Sprintf(centralisedCollect, `collect = "3800us"`), fixed: fmt.Sprintf(centralisedCollect, "")},
	{name: "ricart-agrawala-tie-break", src: raWorkload, spec: &raTies, fixed: raWorkload},
	{name: "chang-roberts-no-participant-rule", src: crRing, spec: &crNoRule, fixed: crRing},
	{name: "bully-replace-race", src: mustRead("../scenarios/sim/bully-replace-race.toml")},
}

// fails simulates a variant at a seed and reports whether it failed
// (any check false).
func (v *variant) fails(t testing.TB, sc *scenario.Scenario, spec *nodes.Spec, seed int64, st Strategy) bool {
	cfg, err := FromScenario(sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	if spec != nil {
		cfg.Spec = *spec
	}
	cfg.Strategy = st
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	return res.Valid == checks.False
}

func (v *variant) scenario(t testing.TB, src string) *scenario.Scenario {
	sc, err := scenario.Parse(v.name+".toml", src)
	if err != nil {
		t.Fatalf("%s: %v", v.name, err)
	}
	return sc
}

// firstFailure is the number of seeds from `from` on until the variant
// first fails (the failing seed counted), at most most; ok is false when
// none failed.
func (v *variant) firstFailure(t testing.TB, sc *scenario.Scenario, from int64, most int, st Strategy) (int, bool) {
	for i := 0; i < most; i++ {
		if v.fails(t, sc, v.spec, from+int64(i), st) {
			return i + 1, true
		}
	}
	return most, false
}

// Each broken variant fails within a hundred seeds of the portfolio, and
// the same scenario with the algorithm right does not fail at any of
// them: the benchmark measures bugs, not noise.
func TestBrokenVariants(t *testing.T) {
	for _, v := range variants {
		sc := v.scenario(t, v.src)
		if n, ok := v.firstFailure(t, sc, 1, 100, Strategy{Name: Portfolio}); !ok {
			t.Errorf("%s: no failure in %d seeds", v.name, n)
		}
		if v.fixed == "" {
			continue
		}
		fixed := v.scenario(t, v.fixed)
		for seed := int64(1); seed <= 30; seed++ {
			if v.fails(t, fixed, nil, seed, Strategy{Name: Portfolio}) {
				t.Errorf("%s fixed fails at seed %d", v.name, seed)
				break
			}
		}
	}
}

// BenchmarkStrategies measures, for each broken variant and strategy, the
// seeds to the first failure: b.N runs, each from its own block of seeds
// (from 1, 100001, 200001, ...), each stopping at its first failure or
// after 3000 seeds. It reports the median and the mean per variant and
// strategy, then each strategy's median over the variants of its median
// divided by random's. Run it with a fixed number of runs:
//
//	go test ./sim -run '^$' -bench Strategies -benchtime 20x -v
func BenchmarkStrategies(b *testing.B) {
	const most = 3000
	strategies := []Strategy{{Name: Random}, {Name: PCT, Depth: DefaultDepth}, {Name: Bias}, {Name: Portfolio}}
	medians := map[string]map[string]float64{} // variant → strategy → median
	rows := map[string]string{}                // the last run of each sub-benchmark's line
	for _, v := range variants {
		sc := v.scenario(b, v.src)
		medians[v.name] = map[string]float64{}
		for _, st := range strategies {
			b.Run(v.name+"/"+st.String(), func(b *testing.B) {
				var runs []float64
				censored := 0
				for i := 0; i < b.N; i++ {
					n, ok := v.firstFailure(b, sc, 1+int64(i)*100000, most, st)
					if !ok {
						censored++
					}
					runs = append(runs, float64(n))
				}
				med, mean := median(runs), meanOf(runs)
				b.ReportMetric(med, "median-seeds")
				b.ReportMetric(mean, "mean-seeds")
				medians[v.name][st.String()] = med
				rows[v.name+"/"+st.String()] = fmt.Sprintf("%-34s %-10s %5d %8.1f %8.1f %9d\n", v.name, st, b.N, med, mean, censored)
			})
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-34s %-10s %5s %8s %8s %9s\n", "variant", "strategy", "runs", "median", "mean", "censored")
	for _, v := range variants {
		for _, st := range strategies {
			table.WriteString(rows[v.name+"/"+st.String()])
		}
	}
	fmt.Fprintf(&table, "\nmedian over the variants of (median seeds / random's median seeds):\n")
	for _, st := range strategies[1:] {
		var ratios []float64
		for _, v := range variants {
			if r := medians[v.name][Random]; r > 0 {
				ratios = append(ratios, medians[v.name][st.String()]/r)
			}
		}
		fmt.Fprintf(&table, "  %-10s %.3f   (%s)\n", st, median(ratios), formatRatios(ratios))
	}
	b.Log("\n" + table.String())
}

// mustRead is a file's text; it panics if the file cannot be read.
func mustRead(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func meanOf(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(max(len(xs), 1))
}

func formatRatios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.3f", r)
	}
	return strings.Join(parts, ", ")
}
