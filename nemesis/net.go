package nemesis

import (
	"math/rand/v2"
	"time"
)

// Link is one direction between two nodes.
type Link struct{ From, To string }

// Fate is what happens to one message: delivered after Delay, or dropped
// with a reason.
type Fate struct {
	Drop   bool
	Reason string
	Delay  time.Duration
}

// Net is the network's behaviour on every link. It is not safe for
// concurrent use; the driver serialises calls.
type Net struct {
	// Latency is the base one-way delay.
	Latency time.Duration
	// Jitter adds a uniform random delay in [0, Jitter).
	Jitter time.Duration
	// FIFO keeps each link in order: a message is never delivered before
	// one sent earlier on the same link.
	FIFO bool

	rng  *rand.Rand
	last map[Link]time.Duration // latest delivery time per link (FIFO)
}

// NewNet returns a network drawing its random choices from rng.
func NewNet(latency, jitter time.Duration, fifo bool, rng *rand.Rand) *Net {
	return &Net{Latency: latency, Jitter: jitter, FIFO: fifo, rng: rng, last: map[Link]time.Duration{}}
}

// Decide returns the fate of a message sent at now on link l.
func (n *Net) Decide(l Link, now time.Duration) Fate {
	d := n.Latency
	if n.Jitter > 0 {
		d += time.Duration(n.rng.Int64N(int64(n.Jitter)))
	}
	if n.FIFO {
		if at := now + d; at < n.last[l] {
			d = n.last[l] - now
		}
		n.last[l] = now + d
	}
	return Fate{Delay: d}
}
