package report

import (
	"fmt"
	"math"

	"github.com/coupharness/coup/history"
)

// A history's times come from a file that may be crafted or damaged: an
// event at the largest int64, times that run backwards, negative bounds.
// Everything the report draws goes through an axis, which saturates every
// time to its window and computes its ticks by count, never by stepping a
// time that could wrap around; so no time can make the report loop or grow.

// axis maps a window of history time onto pixels.
type axis struct {
	from, to    int64   // the window, from < to
	left, width float64 // its pixels
}

// newAxis returns the axis of [from, to]; an empty or reversed window
// becomes one nanosecond wide.
func newAxis(from, to int64, left, width float64) axis {
	if to <= from {
		if from == math.MaxInt64 {
			from--
		}
		to = from + 1
	}
	return axis{from: from, to: to, left: left, width: width}
}

// span is the window's length, as a float (to - from may not fit an int64).
func (a axis) span() float64 { return float64(a.to) - float64(a.from) }

// right is the pixel of the window's end.
func (a axis) right() float64 { return a.left + a.width }

// x is the pixel of t, saturated to the window.
func (a axis) x(t int64) float64 { return a.xRaw(clampTime(t, a.from, a.to)) }

// xRaw is the pixel of t, outside the window when t is.
func (a axis) xRaw(t int64) float64 {
	return a.left + (float64(t)-float64(a.from))/a.span()*a.width
}

// overlaps reports whether [from, to] meets the window.
func (a axis) overlaps(from, to int64) bool { return to >= a.from && from <= a.to }

// contains reports whether t lies in the window.
func (a axis) contains(t int64) bool { return t >= a.from && t <= a.to }

// tick is a labelled time on an axis.
type tick struct {
	t     int64
	label string
}

// maxTicks bounds the ticks of any axis.
const maxTicks = 24

// ticks returns round times (1, 2 or 5 times a power of ten nanoseconds)
// that cut the window into about eight parts, at most maxTicks of them.
func (a axis) ticks() []tick {
	step := tickStep(a.span())
	first := math.Ceil(float64(a.from)/step) * step
	var out []tick
	for i := 0; i < maxTicks; i++ {
		f := first + float64(i)*step
		if f > float64(a.to) {
			break
		}
		t := clampTime(floatTime(f), a.from, a.to)
		out = append(out, tick{t: t, label: tickLabel(f, step)})
	}
	return out
}

// tickStep returns a round step, at least a nanosecond, that cuts span
// into about eight parts.
func tickStep(span float64) float64 {
	raw := span / 8
	if !(raw > 1) { // also NaN
		return 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// tickLabel formats a tick at t (nanoseconds) in seconds, with as many
// decimals as its step needs.
func tickLabel(t, step float64) string {
	decimals := 0
	for s := 1e9; s > step && decimals < 9; s /= 10 {
		decimals++
	}
	return fmt.Sprintf("%.*fs", decimals, t/1e9)
}

// floatTime converts a time held as a float back to an int64, saturated.
func floatTime(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// clampTime saturates t to [lo, hi].
func clampTime(t, lo, hi int64) int64 { return max(lo, min(t, hi)) }

// addTime is a + b, saturated to the int64 range.
func addTime(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// runWindow is the span of the run as drawn: from 0 (times before it are
// drawn at it) to the latest time of any event, at least a nanosecond.
func runWindow(h *history.History) (int64, int64) {
	end := int64(1)
	for e := range h.All() {
		end = max(end, e.Time)
	}
	return 0, end
}

// padWindow returns [from - pad, to + pad] saturated to [lo, hi].
func padWindow(from, to, pad, lo, hi int64) (int64, int64) {
	from, to = clampTime(addTime(from, -pad), lo, hi), clampTime(addTime(to, pad), lo, hi)
	if to <= from {
		return lo, hi
	}
	return from, to
}
