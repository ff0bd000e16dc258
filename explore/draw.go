package explore

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// drawer draws faults from a scenario's vocabulary: every draw a fault
// the scenario accepts, every choice from the rng it is given.
type drawer struct {
	v        scenario.Vocabulary
	nodes    []string
	duration time.Duration
	// realDisk: the nodes' disks are real servers' (coup's storage
	// layer), which a slow disk can slow.
	realDisk bool
	// own are the scenario's own faults, before every schedule's.
	own []scenario.Fault
}

func newDrawer(sc *scenario.Scenario) *drawer {
	return &drawer{v: sc.Vocabulary(), nodes: sc.NodeNames(), duration: sc.Duration.D, realDisk: sc.Server != nil, own: sc.Faults}
}

// redraws bounds how often a schedule's fault that cannot act is drawn
// again.
const redraws = 8

// schedule draws a schedule of one to MaxFaults faults, in the order of
// their times, as a Jepsen nemesis would: each fault a kind, a target, a
// start (a time, or a trigger armed at a time) and a duration, all drawn
// uniformly from the vocabulary (durations and intensities on a log
// scale, so that short and long are alike likely). A fault that cannot
// act (a restart with no node down, canAct) is drawn again, up to
// redraws times.
func (d *drawer) schedule(rng *rand.Rand) []scenario.Fault {
	n := 1 + rng.IntN(d.v.MaxFaults)
	out := make([]scenario.Fault, n)
	for i := range out {
		out[i] = d.fault(rng)
	}
	sortFaults := func() { slices.SortStableFunc(out, func(a, b scenario.Fault) int { return int(a.At.D - b.At.D) }) }
	sortFaults()
	for try := 0; try < redraws; try++ {
		all := append(slices.Clone(d.own), out...)
		i := -1
		for j := range out {
			if !canAct(all, len(d.own)+j) {
				i = j
				break
			}
		}
		if i < 0 {
			break
		}
		out[i] = d.fault(rng)
		sortFaults()
	}
	return out
}

// fault draws one fault.
func (d *drawer) fault(rng *rand.Rand) scenario.Fault {
	return d.faultOf(rng, d.v.Kinds[rng.IntN(len(d.v.Kinds))])
}

// faultOf draws one fault of kind.
func (d *drawer) faultOf(rng *rand.Rand, kind nemesis.Kind) scenario.Fault {
	f := scenario.Fault{Kind: string(kind), At: dur(d.at(rng))}
	d.retarget(rng, &f)
	d.stretch(rng, &f)
	d.intensity(rng, &f)
	if t := d.v.Triggers[rng.IntN(len(d.v.Triggers))]; t.When() != nil {
		f.When = t.When()
	}
	return f
}

// at draws a time within the vocabulary's bounds, short of the run's end.
func (d *drawer) at(rng *rand.Rand) time.Duration {
	lo, hi := d.v.At[0], min(d.v.At[1], d.duration-time.Microsecond)
	if hi <= lo {
		return lo
	}
	return round(lo + time.Duration(rng.Int64N(int64(hi-lo))))
}

// lasts reports whether a fault of kind lasts a while (and so takes for).
func lasts(kind string) bool {
	switch nemesis.Kind(kind) {
	case nemesis.Restart, nemesis.Replace, nemesis.Resume, nemesis.Timely:
		return false
	}
	return true
}

// lastsFault is lasts for one fault: a disk's corruption, too, takes no
// time.
func lastsFault(f *scenario.Fault) bool {
	return lasts(f.Kind) && !(f.Kind == string(nemesis.Disk) && f.Mode == string(nemesis.DiskCorrupt))
}

// stretch draws how long f lasts, if it lasts.
func (d *drawer) stretch(rng *rand.Rand, f *scenario.Fault) {
	if !lastsFault(f) {
		f.For = scenario.Duration{}
		return
	}
	f.For = dur(max(time.Microsecond, round(logUniform(rng, d.v.For[0], d.v.For[1]))))
}

// retarget draws f's target (and a partition's shape and cut) among those
// its kind takes.
func (d *drawer) retarget(rng *rand.Rand, f *scenario.Fault) {
	kind := nemesis.Kind(f.Kind)
	f.Target, f.Shape, f.Cut = scenario.Target{}, "", ""
	if kind == nemesis.Partition {
		f.Shape = string(d.v.Shapes[rng.IntN(len(d.v.Shapes))])
		if len(d.v.Cuts) > 0 {
			f.Cut = string(d.v.Cuts[rng.IntN(len(d.v.Cuts))])
		}
		switch nemesis.Shape(f.Shape) {
		case nemesis.Halves, nemesis.MajoritiesRing:
			return
		}
	}
	targets := d.targets(kind)
	if len(targets) == 0 {
		targets = []string{string(nemesis.One)}
	}
	switch kind {
	case nemesis.Loss, nemesis.Delay, nemesis.Duplicate, nemesis.Corrupt, nemesis.Bandwidth:
		if rng.IntN(len(targets)+1) == 0 {
			return // every link
		}
	}
	f.Target = scenario.Target{Names: []string{targets[rng.IntN(len(targets))]}, Set: true}
}

// targets are the vocabulary's targets that a fault of kind may take.
func (d *drawer) targets(kind nemesis.Kind) []string {
	var out []string
	for _, t := range d.v.Targets {
		switch {
		case t == string(nemesis.Holder) && kind != nemesis.Pause:
		case t == string(nemesis.Leader) && (kind == nemesis.Restart || kind == nemesis.Resume):
		default:
			out = append(out, t)
		}
	}
	return out
}

// intensity draws what f's kind takes beyond its target and times: a
// probability, a delay, a rate.
func (d *drawer) intensity(rng *rand.Rand, f *scenario.Fault) {
	f.Probability, f.Delay, f.Jitter, f.Rate, f.Burst, f.Offset = nil, scenario.Duration{}, scenario.Duration{}, nil, nil, scenario.Duration{}
	f.Disk, f.Files, f.Bits, f.Zero, f.Truncate, f.Ops = "", "", nil, nil, nil, ""
	if f.Kind != string(nemesis.Corrupt) {
		f.Mode = ""
	}
	switch nemesis.Kind(f.Kind) {
	case nemesis.Crash:
		if slices.Contains(d.v.Kinds, nemesis.Disk) && rng.IntN(2) == 0 {
			f.Disk = string(nemesis.PowerFails[rng.IntN(len(nemesis.PowerFails))])
		}
	case nemesis.Disk:
		d.disk(rng, f)
	case nemesis.Loss, nemesis.Duplicate, nemesis.Corrupt:
		p := d.v.Probability[0] + rng.Float64()*(d.v.Probability[1]-d.v.Probability[0])
		p = math.Round(p*100) / 100
		f.Probability = &p
	case nemesis.Delay:
		delay := round(logUniform(rng, d.v.Delay[0], d.v.Delay[1]))
		f.Delay = dur(delay)
		if j := round(time.Duration(rng.Int64N(int64(delay) + 1))); j > 0 {
			f.Jitter = dur(j)
		}
	case nemesis.Bandwidth:
		lo, hi := math.Log(d.v.Bandwidth[0]), math.Log(d.v.Bandwidth[1])
		r := roundSig(math.Exp(lo + rng.Float64()*(hi-lo)))
		f.Rate = &r
	case nemesis.Clock:
		if d.v.Offset[1] > 0 && rng.IntN(2) == 0 {
			// A jump, ahead or back, instead of a rate.
			jump := round(logUniform(rng, d.v.Offset[0], d.v.Offset[1]))
			if rng.IntN(2) == 0 {
				jump = -jump
			}
			f.Offset = dur(jump)
			return
		}
		lo, hi := math.Log(d.v.Rate[0]), math.Log(d.v.Rate[1])
		r := math.Round(math.Exp(lo+rng.Float64()*(hi-lo))*100) / 100
		if r <= 0 {
			r = 0.01
		}
		f.Rate = &r
	}
}

// logUniform draws a duration in [lo, hi] uniformly on a log scale.
func logUniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo || lo <= 0 {
		if hi > lo {
			return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
		}
		return lo
	}
	a, b := math.Log(float64(lo)), math.Log(float64(hi))
	return min(hi, max(lo, time.Duration(math.Exp(a+rng.Float64()*(b-a)))))
}

// round rounds a drawn time as a person would write it: to the
// millisecond from a second on, to ten microseconds from a millisecond
// on, else to the microsecond.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// disk draws a disk fault's mode and what it takes: a corruption of 1 to
// 8 bits of any file (it takes no time), a full disk, a slow one (each
// write and sync waiting up to the vocabulary's longest delay; real
// servers only: the simulator's disk takes no time) or failing reads or
// writes.
func (d *drawer) disk(rng *rand.Rand, f *scenario.Fault) {
	modes := []nemesis.DiskMode{nemesis.DiskCorrupt, nemesis.DiskFull, nemesis.DiskEIO}
	if d.realDisk {
		modes = append(modes, nemesis.DiskSlow)
	}
	m := modes[rng.IntN(len(modes))]
	f.Mode = string(m)
	switch m {
	case nemesis.DiskCorrupt:
		bits := 1 + rng.IntN(8)
		f.Bits = &bits
		f.For = scenario.Duration{}
	case nemesis.DiskSlow:
		f.Delay = dur(round(logUniform(rng, d.v.Delay[0], d.v.Delay[1])))
	case nemesis.DiskEIO:
		f.Ops = []string{"read", "write", "both"}[rng.IntN(3)]
	}
}
