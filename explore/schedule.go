package explore

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coupharness/coup/scenario"
)

// Schedule is what one run of a campaign adds to its scenario: the faults
// drawn from the vocabulary, after the scenario's own, and the seed the
// run has. With the scenario it is a scenario file a person can read,
// save and run again (Scenario).
type Schedule struct {
	Seed   int64
	Faults []scenario.Fault
}

// Scenario is sc with the schedule: sc's own faults, then the schedule's,
// and the schedule's seed, written as a scenario file and read back, so
// that it is validated as a file is and can be saved as one.
func (s Schedule) Scenario(sc *scenario.Scenario) (*scenario.Scenario, error) {
	c := *sc
	c.Faults = append(slices.Clone(sc.Faults), s.Faults...)
	c.Seed = s.Seed
	src := string(c.Encode(""))
	var out *scenario.Scenario
	var err error
	if sc.OwnMachine() {
		out, err = scenario.ParseMachine(sc.File, src)
	} else {
		out, err = scenario.Parse(sc.File, src)
	}
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", s, err)
	}
	return out, nil
}

// clone is a copy of s whose faults may be changed.
func (s Schedule) clone() Schedule {
	c := Schedule{Seed: s.Seed, Faults: slices.Clone(s.Faults)}
	for i := range c.Faults {
		c.Faults[i] = cloneFault(c.Faults[i])
	}
	return c
}

// cloneFault copies the parts of a fault that are shared by reference.
func cloneFault(f scenario.Fault) scenario.Fault {
	f.Target.Names = slices.Clone(f.Target.Names)
	if f.When != nil {
		w := *f.When
		f.When = &w
	}
	for _, p := range []**float64{&f.Probability, &f.Rate} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	for _, p := range []**bool{&f.OneWay, &f.Random} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return f
}

// String is the schedule on one line, for people: "seed 7: replace n5
// at 312ms; pause leader for 40ms on participant=true (armed at 100ms)".
func (s Schedule) String() string {
	if len(s.Faults) == 0 {
		return fmt.Sprintf("seed %d: no fault", s.Seed)
	}
	parts := make([]string, len(s.Faults))
	for i, f := range s.Faults {
		parts[i] = describeFault(f)
	}
	return fmt.Sprintf("seed %d: %s", s.Seed, strings.Join(parts, "; "))
}

func describeFault(f scenario.Fault) string {
	var b strings.Builder
	b.WriteString(f.Kind)
	if f.Shape != "" {
		b.WriteString(" " + f.Shape)
	}
	if f.Target.Set {
		b.WriteString(" " + strings.Join(f.Target.Names, ","))
	}
	if f.Probability != nil {
		fmt.Fprintf(&b, " p=%g", *f.Probability)
	}
	if f.Delay.Set {
		fmt.Fprintf(&b, " +%s", f.Delay.D)
	}
	if f.Rate != nil {
		fmt.Fprintf(&b, " rate %g", *f.Rate)
	}
	if f.Cut != "" {
		b.WriteString(" " + f.Cut)
	}
	if f.For.Set {
		fmt.Fprintf(&b, " for %s", f.For.D)
	}
	if w := f.When; w != nil {
		b.WriteString(" on " + whenString(w))
		fmt.Fprintf(&b, " (armed at %s)", f.At.D)
	} else {
		fmt.Fprintf(&b, " at %s", f.At.D)
	}
	return b.String()
}

func whenString(w *scenario.When) string {
	var s string
	switch {
	case w.Report != "":
		s = w.Report
	case w.Op != "":
		s = w.Op
	default:
		s = w.Process
	}
	if w.Value != "" {
		s += "=" + w.Value
	}
	if w.Node != "" {
		s += " by " + w.Node
	}
	return s
}

// dur is a duration as a scenario writes it.
func dur(d time.Duration) scenario.Duration { return scenario.Duration{D: d, Set: true} }
