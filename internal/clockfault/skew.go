package clockfault

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Skew is what a clock fault does to a process's clocks.
type Skew struct {
	// Offset is added to the clocks at once: a jump forward, or back when
	// negative.
	Offset time.Duration
	// Rate is how fast the clocks run from the moment the fault begins:
	// 1.5 gains half a second every second, 0.8 loses a fifth. 0 means 1.
	Rate float64
	// Realtime and Monotonic pick the clocks: the wall clock
	// (CLOCK_REALTIME and its coarse and alarm forms, gettimeofday, time)
	// and the clocks that count from boot (CLOCK_MONOTONIC, its raw and
	// coarse forms, CLOCK_BOOTTIME), which timeouts, leases and timers
	// read.
	Realtime, Monotonic bool
}

// IsZero reports whether the skew leaves the clocks true.
func (s Skew) IsZero() bool {
	return (s.Offset == 0 && (s.Rate == 0 || s.Rate == 1)) || (!s.Realtime && !s.Monotonic)
}

func (s Skew) rate() float64 {
	if s.Rate == 0 {
		return 1
	}
	return s.Rate
}

func (s Skew) String() string {
	var parts []string
	if s.Offset != 0 {
		parts = append(parts, fmt.Sprintf("%+v", s.Offset))
	}
	if r := s.rate(); r != 1 {
		parts = append(parts, fmt.Sprintf("rate %g", r))
	}
	if len(parts) == 0 {
		parts = append(parts, "true")
	}
	switch {
	case s.Realtime && s.Monotonic:
		parts = append(parts, "(realtime and monotonic)")
	case s.Realtime:
		parts = append(parts, "(realtime)")
	case s.Monotonic:
		parts = append(parts, "(monotonic)")
	}
	return strings.Join(parts, " ")
}

// MaxRate bounds a rate: the hook multiplies in 32.32 fixed point.
const MaxRate = 1 << 20

// Setting is a skew anchored at the moment it began: the rate counts from
// there, so that a clock that runs fast reads true at that moment and
// gains from then on.
type Setting struct {
	Skew
	// Realtime and monotonic true times, in nanoseconds, when it began.
	RealtimeAt, MonotonicAt int64
	// Carry is what the monotonic clocks had gained (or lost) under
	// earlier faults when this one began: a monotonic clock never goes
	// back, so a fault's end leaves it where it is, running at the true
	// rate.
	Carry time.Duration
}

// Begin anchors a skew now.
func Begin(s Skew) Setting {
	rt, mono := Now()
	return Setting{Skew: s, RealtimeAt: rt, MonotonicAt: mono}
}

// Now reads this machine's true realtime and monotonic clocks, in
// nanoseconds, as a process reads them (coup's own clocks are never
// skewed).
func Now() (realtime, monotonic int64) {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	realtime = ts.Nano()
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return realtime, ts.Nano()
}

// At is what a clock of the setting's reads when the true clock reads t
// (realtime says which class).
func (s Setting) At(t int64, realtime bool) int64 {
	anchor, on, carry := s.MonotonicAt, s.Monotonic, int64(s.Carry)
	if realtime {
		anchor, on, carry = s.RealtimeAt, s.Realtime, 0
	}
	if !on {
		return t + carry
	}
	return anchor + int64(float64(t-anchor)*s.rate()) + int64(s.Offset) + carry
}

// Carried is what the setting's monotonic clocks have gained (or lost)
// by the true monotonic time t: what a monotonic clock keeps when the
// fault ends.
func (s Setting) Carried(t int64) time.Duration { return time.Duration(s.At(t, false) - t) }

// IsTrue reports whether the setting leaves every clock true.
func (s Setting) IsTrue() bool { return s.Skew.IsZero() && s.Carry == 0 }

// slot encodes the setting as the hook reads it: for realtime then
// monotonic, the anchor, the offset and the rate in 32.32 fixed point.
func (s Setting) slot() []byte {
	b := make([]byte, 48)
	put := func(i int, anchor int64, on bool, carry int64) {
		off, rate := carry, int64(1)<<32
		if on {
			off += int64(s.Offset)
			rate = int64(math.Round(s.rate() * (1 << 32)))
		}
		binary.LittleEndian.PutUint64(b[i:], uint64(anchor))
		binary.LittleEndian.PutUint64(b[i+8:], uint64(off))
		binary.LittleEndian.PutUint64(b[i+16:], uint64(rate))
	}
	put(0, s.RealtimeAt, s.Realtime, 0)
	put(24, s.MonotonicAt, s.Monotonic, int64(s.Carry))
	return b
}
