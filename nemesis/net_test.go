package nemesis

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// netWith is a net of base latency 1ms with the given rules in force.
func netWith(seed uint64, rules ...*rule) *Net {
	n := NewNet(time.Millisecond, 0, true, seeded(seed))
	for _, r := range rules {
		n.add(r)
	}
	return n
}

func links(nodes ...string) selector { return newSelector(nodes, Both) }

var body = []byte(`{"type":"ping","seq":7,"payload":"n1#7","ok":true,"ids":[1,2,3],"meta":{"hops":2,"via":"n3"}}`)

func msg(from, to string) Msg { return Msg{Link: Link{from, to}, Type: "ping", Body: body} }

// With a loss probability p, the share of messages dropped over many is
// within four standard deviations of p.
func TestLossRate(t *testing.T) {
	for _, p := range []float64{0, 0.05, 0.3, 0.5, 0.9, 1} {
		n := netWith(uint64(p*100), &rule{name: "l", kind: Loss, links: links("n1"), p: p})
		const total = 20000
		dropped := 0
		for i := 0; i < total; i++ {
			if f := n.Decide(msg("n1", "n2"), time.Duration(i)); f.Drop {
				if f.Reason != DropLoss {
					t.Fatalf("dropped for %q, want loss", f.Reason)
				}
				dropped++
			}
		}
		got := float64(dropped) / total
		sigma := math.Sqrt(p * (1 - p) / total)
		if math.Abs(got-p) > 4*sigma+1e-9 {
			t.Errorf("p=%g: observed loss %.4f, outside %g ± %.4f", p, got, p, 4*sigma)
		}
	}
}

// A loss fault covers only the links of its nodes, in its direction.
func TestLinkSelection(t *testing.T) {
	tests := []struct {
		dir  Direction
		link Link
		want bool
	}{
		{Both, Link{"n1", "n2"}, true},
		{Both, Link{"n2", "n1"}, true},
		{Both, Link{"n2", "n3"}, false},
		{Out, Link{"n1", "n2"}, true},
		{Out, Link{"n2", "n1"}, false},
		{In, Link{"n2", "n1"}, true},
		{In, Link{"n1", "n2"}, false},
	}
	for _, tt := range tests {
		n := netWith(1, &rule{name: "l", kind: Loss, links: newSelector([]string{"n1"}, tt.dir), p: 1})
		if got := n.Decide(Msg{Link: tt.link, Body: body}, 0).Drop; got != tt.want {
			t.Errorf("loss on n1 %s: %v dropped = %v, want %v", tt.dir, tt.link, got, tt.want)
		}
	}
}

func TestPartitionDropsCutLinksOnly(t *testing.T) {
	ring := []string{"n1", "n2", "n3"}
	f := &Fault{Kind: Partition, Shape: Isolate}
	l := cuts(f, ring, []string{"n1"}, seeded(1))
	n := netWith(1, &rule{name: "p", kind: Partition, cut: l.cut})
	for _, a := range ring {
		for _, b := range ring {
			if a == b {
				continue
			}
			fate := n.Decide(msg(a, b), 0)
			want := a == "n1" || b == "n1"
			if fate.Drop != want || (want && fate.Reason != DropPartition) {
				t.Errorf("%s->%s: fate %+v, want dropped %v", a, b, fate, want)
			}
		}
	}
}

func TestDelayDistributions(t *testing.T) {
	const ms = float64(time.Millisecond)
	tests := []struct {
		dist         Distribution
		delay, scale time.Duration
		mean         float64 // expected mean extra delay, in ms
	}{
		{Uniform, 10 * time.Millisecond, 4 * time.Millisecond, 12},
		{Normal, 20 * time.Millisecond, 2 * time.Millisecond, 20},
		{Exponential, 5 * time.Millisecond, 3 * time.Millisecond, 8},
		{Uniform, 0, 10 * time.Millisecond, 5},
	}
	for _, tt := range tests {
		r := &rule{name: "d", kind: Delay, links: links("n1"), delay: tt.delay, scale: tt.scale, dist: tt.dist}
		n := NewNet(0, 0, false, seeded(3))
		n.add(r)
		const total = 20000
		sum, lo := 0.0, math.Inf(1)
		for i := 0; i < total; i++ {
			d := float64(n.Decide(msg("n1", "n2"), 0).Copies[0].Delay)
			sum += d
			lo = math.Min(lo, d)
		}
		mean := sum / total / ms
		if math.Abs(mean-tt.mean) > 0.05*tt.mean {
			t.Errorf("%s delay %s scale %s: mean %.3fms, want about %.3fms", tt.dist, tt.delay, tt.scale, mean, tt.mean)
		}
		if lo < 0 {
			t.Errorf("%s: a negative delay %v", tt.dist, lo)
		}
		if tt.dist == Uniform && lo < float64(tt.delay) {
			t.Errorf("uniform: a delay %v below the fixed part %s", lo, tt.delay)
		}
	}
}

// A FIFO link keeps its order, even with base jitter; a delay fault makes
// it reorder.
func TestDelayReorders(t *testing.T) {
	order := func(n *Net) (inversions int) {
		last := time.Duration(-1)
		for i := 0; i < 500; i++ {
			now := time.Duration(i) * 100 * time.Microsecond
			at := now + n.Decide(msg("n1", "n2"), now).Copies[0].Delay
			if at < last {
				inversions++
			}
			last = max(last, at)
		}
		return inversions
	}
	fifo := NewNet(time.Millisecond, 5*time.Millisecond, true, seeded(4))
	if got := order(fifo); got != 0 {
		t.Errorf("a FIFO link with jitter delivered %d messages out of order", got)
	}
	delayed := NewNet(time.Millisecond, 0, true, seeded(4))
	delayed.add(&rule{name: "d", kind: Delay, links: links("n1"), scale: 5 * time.Millisecond, dist: Uniform})
	if got := order(delayed); got == 0 {
		t.Error("a link under a delay fault never reordered")
	}
}

func TestDuplicate(t *testing.T) {
	n := netWith(5, &rule{name: "d", kind: Duplicate, links: links("n1"), p: 1})
	f := n.Decide(msg("n1", "n2"), 0)
	if len(f.Copies) != 2 || f.Copies[0].Duplicate || !f.Copies[1].Duplicate {
		t.Fatalf("copies %+v, want the message and one duplicate", f.Copies)
	}
	if f := n.Decide(msg("n2", "n3"), 0); len(f.Copies) != 1 {
		t.Errorf("a link the fault does not cover got %d copies", len(f.Copies))
	}
	two := netWith(5, &rule{name: "a", kind: Duplicate, links: links("n1"), p: 1}, &rule{name: "b", kind: Duplicate, links: links("n1"), p: 1})
	if f := two.Decide(msg("n1", "n2"), 0); len(f.Copies) != 3 {
		t.Errorf("two duplicate faults gave %d copies, want 3", len(f.Copies))
	}
}

// A bit flip changes exactly one bit and never makes a newline, even in a
// body made of bytes one flip away from it.
func TestFlipBit(t *testing.T) {
	rng := seeded(6)
	near := bytes.Repeat([]byte{0x0B, 0x08, 0x0E, 0x02, '*', 'J'}, 4)
	for i := 0; i < 5000; i++ {
		src := body
		if i%2 == 1 {
			src = near
		}
		out := FlipBit(src, rng)
		if bytes.IndexByte(out, '\n') >= 0 {
			t.Fatalf("a flip made a newline: %q", out)
		}
		bits := 0
		for j := range out {
			x := out[j] ^ src[j]
			for ; x != 0; x &= x - 1 {
				bits++
			}
		}
		if bits != 1 {
			t.Fatalf("%d bits differ, want 1: %q -> %q", bits, src, out)
		}
	}
}

// A field mutation keeps the JSON valid, the type and the keys, and changes
// exactly one value.
func TestMutateField(t *testing.T) {
	rng := seeded(7)
	var orig map[string]any
	if err := json.Unmarshal(body, &orig); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		out, ok := MutateField(body, rng)
		if !ok {
			t.Fatal("no field mutated")
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("invalid JSON after mutation: %s: %v", out, err)
		}
		if got["type"] != "ping" {
			t.Fatalf("the type changed: %s", out)
		}
		changed := 0
		for k := range orig {
			if _, ok := got[k]; !ok {
				t.Fatalf("key %s lost: %s", k, out)
			}
			if !reflect.DeepEqual(got[k], orig[k]) {
				changed++
				if reflect.TypeOf(got[k]) != reflect.TypeOf(orig[k]) {
					t.Fatalf("%s changed kind: %s", k, out)
				}
			}
		}
		if changed != 1 {
			t.Fatalf("%d fields changed, want 1: %s", changed, out)
		}
	}
	for _, b := range []string{`{"type":"x"}`, `{"type":"x","n":null}`, `[1,2]`, `not json`} {
		if out, ok := MutateField([]byte(b), rng); ok {
			t.Errorf("mutated %s into %s; want no mutation", b, out)
		}
	}
}

func TestAlterField(t *testing.T) {
	rng := seeded(8)
	out, ok := AlterField(body, "payload", rng)
	if !ok {
		t.Fatal("payload not altered")
	}
	var a, b map[string]any
	json.Unmarshal(body, &a)
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("invalid JSON: %s", out)
	}
	if a["payload"] == b["payload"] {
		t.Errorf("payload unchanged: %s", out)
	}
	delete(a, "payload")
	delete(b, "payload")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("other fields changed: %s", out)
	}
	if _, ok := AlterField([]byte(`{"type":"x"}`), "payload", rng); ok {
		t.Error("altered a body without a payload")
	}
}

func TestCorruptAndJoker(t *testing.T) {
	tests := []struct {
		name      string
		rules     []*rule
		link      Link
		want      string
		wantResum bool
	}{
		{"bitflip", []*rule{{name: "c", kind: Corrupt, links: links("n1"), p: 1, mode: BitFlip}}, Link{"n1", "n2"}, "bitflip", false},
		{"mutate", []*rule{{name: "c", kind: Corrupt, links: links("n1"), p: 1, mode: Mutate}}, Link{"n1", "n2"}, "mutate", false},
		{"joker", []*rule{{name: "j", kind: Joker, links: newSelector([]string{"n1"}, Out)}}, Link{"n1", "n2"}, "joker", true},
		{"joker receives unaltered", []*rule{{name: "j", kind: Joker, links: newSelector([]string{"n1"}, Out)}}, Link{"n2", "n1"}, "", false},
		{"joker then the wire", []*rule{
			{name: "j", kind: Joker, links: newSelector([]string{"n1"}, Out)},
			{name: "c", kind: Corrupt, links: links("n1"), p: 1, mode: BitFlip},
		}, Link{"n1", "n2"}, "joker+bitflip", false},
		{"probability 0", []*rule{{name: "c", kind: Corrupt, links: links("n1"), p: 0, mode: BitFlip}}, Link{"n1", "n2"}, "", false},
	}
	for _, tt := range tests {
		n := netWith(9, tt.rules...)
		c := n.Decide(Msg{Link: tt.link, Body: body}, 0).Copies[0]
		if c.Corrupt != tt.want || c.Resum != tt.wantResum {
			t.Errorf("%s: corrupt %q resum %v, want %q %v", tt.name, c.Corrupt, c.Resum, tt.want, tt.wantResum)
		}
		if (c.Body != nil) != (tt.want != "") || (c.Body != nil && bytes.Equal(c.Body, body)) {
			t.Errorf("%s: body %q", tt.name, c.Body)
		}
	}
}

// After GST a timely link delivers everything within delta, whatever the
// loss; the links it does not cover stay lossy.
func TestTimelyLinks(t *testing.T) {
	n := NewNet(2*time.Millisecond, 20*time.Millisecond, true, seeded(10))
	n.add(&rule{name: "l", kind: Loss, links: links("n1", "n2", "n3"), p: 0.9})
	n.add(&rule{name: "d", kind: Delay, links: links("n1", "n2", "n3"), delay: 50 * time.Millisecond, dist: Uniform})
	n.add(&rule{name: "t", kind: Timely, links: newSelector([]string{"n1"}, Out), delta: 5 * time.Millisecond})
	lost := 0
	for i := 0; i < 1000; i++ {
		now := time.Duration(i) * time.Millisecond
		f := n.Decide(msg("n1", "n2"), now)
		if f.Drop || f.Copies[0].Delay > 5*time.Millisecond {
			t.Fatalf("a message on a timely link: %+v", f)
		}
		if n.Decide(msg("n2", "n1"), now).Drop {
			lost++
		}
	}
	if lost < 850 {
		t.Errorf("the link into the source lost %d of 1000, want about 900", lost)
	}
}

// The same seed and the same messages give the same fates.
func TestFatesAreDeterministic(t *testing.T) {
	mk := func(seed uint64) []Fate {
		n := NewNet(time.Millisecond, 3*time.Millisecond, true, seeded(seed))
		n.add(&rule{name: "l", kind: Loss, links: links("n1"), p: 0.3})
		n.add(&rule{name: "d", kind: Duplicate, links: links("n2"), p: 0.3})
		n.add(&rule{name: "c", kind: Corrupt, links: links("n3"), p: 0.3, mode: Mutate})
		n.add(&rule{name: "x", kind: Delay, links: links("n3"), scale: time.Millisecond, dist: Exponential})
		var out []Fate
		nodes := []string{"n1", "n2", "n3"}
		for i := 0; i < 300; i++ {
			out = append(out, n.Decide(msg(nodes[i%3], nodes[(i+1)%3]), time.Duration(i)*time.Millisecond))
		}
		return out
	}
	if a, b := mk(11), mk(11); !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different fates")
	}
	if a, b := mk(11), mk(12); reflect.DeepEqual(a, b) {
		t.Error("different seeds gave the same fates")
	}
}

func FuzzMutateField(f *testing.F) {
	f.Add([]byte(body), uint64(1))
	f.Add([]byte(`{"type":"x","a":[{"b":"\u00e9"}],"c":-1.5e300}`), uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		out, ok := MutateField(b, seeded(seed))
		if ok && json.Valid(b) && !json.Valid(out) {
			t.Errorf("valid input %q mutated into invalid JSON %q", b, out)
		}
		if ok && bytes.Equal(out, b) {
			t.Errorf("mutation left %q unchanged", b)
		}
	})
}

// Alters is true exactly when a joker or a corruption covers the link, and
// a net whose Alters is false decides the same fates with or without the
// body.
func TestAlters(t *testing.T) {
	tests := []struct {
		name string
		rule *rule
		link Link
		want bool
	}{
		{"none", nil, Link{"n1", "n2"}, false},
		{"loss", &rule{name: "l", kind: Loss, links: links("n1"), p: 0.5}, Link{"n1", "n2"}, false},
		{"corrupt covers", &rule{name: "c", kind: Corrupt, links: links("n1"), p: 0.5}, Link{"n2", "n1"}, true},
		{"corrupt elsewhere", &rule{name: "c", kind: Corrupt, links: links("n3"), p: 0.5}, Link{"n1", "n2"}, false},
		{"joker out", &rule{name: "j", kind: Joker, links: newSelector([]string{"n1"}, Out)}, Link{"n1", "n2"}, true},
		{"joker not in", &rule{name: "j", kind: Joker, links: newSelector([]string{"n1"}, Out)}, Link{"n2", "n1"}, false},
	}
	for _, tt := range tests {
		var rules []*rule
		if tt.rule != nil {
			rules = append(rules, tt.rule)
		}
		if got := netWith(1, rules...).Alters(tt.link); got != tt.want {
			t.Errorf("%s: Alters(%v) = %v, want %v", tt.name, tt.link, got, tt.want)
		}
		if tt.want {
			continue
		}
		with, without := netWith(9, rules...), netWith(9, rules...)
		for i := 0; i < 200; i++ {
			m := Msg{Link: tt.link, Type: "ping", Body: body}
			a := with.Decide(m, time.Duration(i))
			m.Body = nil
			b := without.Decide(m, time.Duration(i))
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: message %d: fate %+v with the body, %+v without", tt.name, i, a, b)
			}
		}
	}
}

// DecideInto gives the fates Decide gives, and with a buffer large enough
// it allocates nothing.
func TestDecideInto(t *testing.T) {
	rules := func() []*rule {
		return []*rule{
			{name: "d", kind: Duplicate, links: links("n1"), p: 0.5},
			{name: "l", kind: Loss, links: links("n2"), p: 0.3},
		}
	}
	a, b := netWith(3, rules()...), netWith(3, rules()...)
	var buf []Copy
	for i := 0; i < 500; i++ {
		m := msg("n1", "n2")
		m.Body = nil
		want := a.Decide(m, time.Duration(i))
		got := b.DecideInto(buf, m, time.Duration(i))
		buf = got.Copies
		if !reflect.DeepEqual(got.Drop, want.Drop) || !reflect.DeepEqual(append([]Copy{}, got.Copies...), append([]Copy{}, want.Copies...)) {
			t.Fatalf("message %d: DecideInto gave %+v, Decide %+v", i, got, want)
		}
	}
	n := netWith(5, rules()...)
	buf = make([]Copy, 0, 4)
	m := msg("n1", "n3")
	m.Body = nil
	if allocs := testing.AllocsPerRun(200, func() { buf = n.DecideInto(buf, m, 0).Copies }); allocs != 0 {
		t.Errorf("DecideInto allocated %v times per message, want 0", allocs)
	}
}

func TestChange(t *testing.T) {
	body := []byte(`{"type":"coordinator","leader":"n2","payload":"n1/1/abc"}`)
	for _, c := range []struct{ altered, want string }{
		{`{"type":"coordinator","leader":"n2","payload":"n1/1/abd"}`, `field "payload": "n1/1/abc" → "n1/1/abd"`},
		{`{"type":"coordinator","leader":"n3","payload":"n1/1/abc"}`, `field "leader": "n2" → "n3"`},
		{`{"type":"coordinator","leader":"n2","payload":"n1/1/abc"}`, ``},
		// One bit of the quote at 8 flipped: the JSON broke.
		{`{"type":#coordinator","leader":"n2","payload":"n1/1/abc"}`, `bit 0 of byte 8: '"' → '#'`},
		{`{"type":"coordinator","leader":"n2","payload":"n1/1/abc"`, `bytes 56–57: } → (nothing)`},
	} {
		if got := Change(body, []byte(c.altered)); got != c.want {
			t.Errorf("Change(%s) = %q, want %q", c.altered, got, c.want)
		}
	}
	// Every mutation names a field; every flip that breaks the JSON names a
	// bit.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		m, ok := MutateField(body, rng)
		if !ok {
			t.Fatal("MutateField found nothing to change")
		}
		if got := Change(body, m); !strings.HasPrefix(got, "field ") {
			t.Errorf("Change after a mutation to %s = %q", m, got)
		}
		if f := FlipBit(body, rng); !json.Valid(f) && !strings.HasPrefix(Change(body, f), "bit ") {
			got := Change(body, f)
			t.Errorf("Change after a bit flip = %q", got)
		}
	}
}

// Spread places each copy's jitter instead of the stream: 0 gives the
// bare latency, a fraction that share of the jitter, 1 (or more) just
// under the whole of it; and the stream is not drawn from, so the fates
// that follow are the stream's as before.
func TestSpread(t *testing.T) {
	frac := map[string]float64{"n1": 0, "n2": 0.5, "n3": 1, "n4": 7}
	n := NewNet(time.Millisecond, 10*time.Millisecond, false, seeded(3))
	n.Spread = func(l Link) float64 { return frac[l.From] }
	want := map[string]time.Duration{"n1": time.Millisecond, "n2": 6 * time.Millisecond, "n3": 11*time.Millisecond - 1, "n4": 11*time.Millisecond - 1}
	for from, d := range want {
		f := n.Decide(msg(from, "n5"), 0)
		if len(f.Copies) != 1 || f.Copies[0].Delay != d {
			t.Errorf("from %s: %+v, want one copy after %s", from, f, d)
		}
	}
	plain := NewNet(time.Millisecond, 10*time.Millisecond, false, seeded(3))
	if a, b := n.rng.Uint64(), plain.rng.Uint64(); a != b {
		t.Errorf("the spread net drew from its stream: next %d, want %d", a, b)
	}
}

// A bandwidth fault is a token bucket on each link it covers: back-to-back
// messages leave one after another at its rate (so the n-th of size s is
// delivered n·s/rate after the first was sent), an idle link first sends
// its burst at once, a link it does not cover is not held back, a message
// that would wait longer than its Queue is dropped without using the
// link, and Sized says which links need a message's size.
func TestBandwidth(t *testing.T) {
	const rate, size = 10000.0, 1000 // 0.1s a message
	bw := func(burst int64) *rule {
		return &rule{name: "b", kind: Bandwidth, links: newSelector([]string{"n1"}, Out), rate: rate, burst: burst}
	}
	sized := func(from, to string, queue time.Duration) Msg {
		m := msg(from, to)
		m.Size, m.Queue = size, queue
		return m
	}
	n := netWith(1, bw(0))
	for i := 1; i <= 5; i++ {
		f := n.Decide(sized("n1", "n2", 0), 0)
		if want := time.Millisecond + time.Duration(i)*100*time.Millisecond; f.Drop || f.First().Delay != want {
			t.Errorf("message %d: %+v, want delivered after %s", i, f, want)
		}
	}
	if f := n.Decide(sized("n2", "n1", 0), 0); f.First().Delay != time.Millisecond {
		t.Errorf("n2→n1, not covered: delay %s, want the base 1ms", f.First().Delay)
	}
	// After a quiet second the bucket is full again: a burst of 2500 bytes
	// lets two messages through at once, the third waits for its last 500.
	n = netWith(1, bw(2500))
	for i, want := range []time.Duration{0, 0, 50 * time.Millisecond, 150 * time.Millisecond} {
		if f := n.Decide(sized("n1", "n2", 0), time.Second); f.First().Delay != time.Millisecond+want {
			t.Errorf("burst, message %d: delay %s, want %s", i, f.First().Delay, time.Millisecond+want)
		}
	}
	// MinQueue bytes take 0.1s; they would leave at 0, 0.1s, 0.2s, 0.2s.
	n = netWith(1, &rule{name: "b", kind: Bandwidth, links: newSelector([]string{"n1"}, Out), rate: MinQueue / 0.1})
	for i, drop := range []bool{false, false, true, true} {
		m := sized("n1", "n2", 150*time.Millisecond)
		m.Size = MinQueue
		if f := n.Decide(m, 0); f.Drop != drop || drop && f.Reason != DropOverflow {
			t.Errorf("queue of 150ms, message %d: %+v, want dropped for overflow: %v", i, f, drop)
		}
	}
	if f := n.Decide(Msg{Link: Link{"n1", "n2"}, Size: MinQueue, Queue: 50 * time.Millisecond}, 0); !f.Drop {
		t.Errorf("a queue of 50ms holds %d bytes at the least: 0.2s of wait is more, yet %+v", MinQueue, f)
	}
	if f := n.Decide(Msg{Link: Link{"n1", "n2"}, Size: MinQueue}, 0); f.First().Delay != time.Millisecond+300*time.Millisecond {
		t.Errorf("after the overflows: delay %s, want 301ms (the dropped messages took no time of the link)", f.First().Delay)
	}
	if !n.Sized(Link{"n1", "n2"}) || n.Sized(Link{"n2", "n1"}) {
		t.Error("Sized: want n1→n2 only")
	}
}
