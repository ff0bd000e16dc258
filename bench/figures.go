package bench

import (
	"slices"
	"syscall"
	"time"
)

// Figures are what the pinger measured in one probe run, over the
// measured time (the warm-up excluded).
type Figures struct {
	Mode string `json:"mode"`
	// Sent counts the pings sent; Completed the round trips measured;
	// Lost the pings never answered; Late the echoes that came after
	// their ping was given up (a retransmission timeout too short); Dup
	// the echoes that came for a ping already answered (duplicates).
	Sent      int64 `json:"sent"`
	Completed int64 `json:"completed"`
	Lost      int64 `json:"lost"`
	Late      int64 `json:"late"`
	Dup       int64 `json:"dup"`
	// Pings counts every ping sent, warm-up included.
	Pings int64 `json:"pings"`
	// Seconds is the measured time.
	Seconds float64 `json:"seconds"`
	// The round trips' percentiles, mean and maximum, in nanoseconds.
	P50  int64 `json:"p50_ns"`
	P90  int64 `json:"p90_ns"`
	P99  int64 `json:"p99_ns"`
	P999 int64 `json:"p999_ns"`
	Max  int64 `json:"max_ns"`
	Mean int64 `json:"mean_ns"`

	// CPU is the processor time the benchmark's process (the relay, or
	// coup's harness) spent from starting the probe to its report; the
	// probe's own processes are not counted.
	CPU time.Duration `json:"-"`
}

// CPUPerMessage is the carrier's processor time per message carried: CPU
// over every ping and its echo, warm-up included (start-up is counted
// too, and weighs little beside a saturated run).
func (f Figures) CPUPerMessage() time.Duration {
	if f.Pings == 0 {
		return 0
	}
	return f.CPU / time.Duration(2*f.Pings)
}

// processCPU is the processor time this process has used so far, user and
// system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Throughput is round trips per second.
func (f Figures) Throughput() float64 {
	if f.Seconds <= 0 {
		return 0
	}
	return float64(f.Completed) / f.Seconds
}

// setLatencies fills in the percentiles of the round trips (sorted in
// place).
func (f *Figures) setLatencies(rtts []int64) {
	if len(rtts) == 0 {
		return
	}
	slices.Sort(rtts)
	var sum int64
	for _, r := range rtts {
		sum += r
	}
	f.Mean = sum / int64(len(rtts))
	f.P50 = percentile(rtts, 0.50)
	f.P90 = percentile(rtts, 0.90)
	f.P99 = percentile(rtts, 0.99)
	f.P999 = percentile(rtts, 0.999)
	f.Max = rtts[len(rtts)-1]
}

// percentile is the nearest-rank percentile q of sorted values.
func percentile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// median is the median of xs (the mean of the middle two for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ns turns nanoseconds into a duration.
func ns(x float64) time.Duration { return time.Duration(x) }
