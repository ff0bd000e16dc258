package harness

import (
	"slices"
	"testing"
)

// A reader takes the write turn without waiting only when nobody holds it,
// something waits and its lines fit; what it gives back goes out before
// what came meanwhile, in order.
func TestOutboxTakeNowAndGiveBack(t *testing.T) {
	o := newOutbox(16)
	if _, _, ok := o.takeNow(100); ok {
		t.Fatal("takeNow of an empty outbox: want false")
	}
	o.putQuiet(delivery{msg: 1, line: []byte("a\n")})
	o.putQuiet(delivery{msg: 2, line: []byte("b\n")})
	if _, _, ok := o.takeNow(3); ok {
		t.Fatal("takeNow of 4 bytes of lines with a limit of 3: want false")
	}
	batch, lines, ok := o.takeNow(100)
	if !ok || len(batch) != 2 || string(lines) != "a\nb\n" {
		t.Fatalf("takeNow: %v %q %v; want both deliveries and their lines", batch, lines, ok)
	}
	if _, _, ok := o.takeNow(100); ok {
		t.Fatal("takeNow while the turn is held: want false")
	}
	if o.claim() {
		t.Fatal("claim while the turn is held: want false")
	}
	o.putQuiet(delivery{msg: 3, line: []byte("c\n")})
	o.giveBack(batch, lines)
	got, lines, ok := o.take()
	var ids []int64
	for _, d := range got {
		ids = append(ids, d.msg)
	}
	if !ok || !slices.Equal(ids, []int64{1, 2, 3}) || string(lines) != "a\nb\nc\n" {
		t.Fatalf("take after giveBack: %v %q; want 1, 2, 3 and their lines in order", ids, lines)
	}
	o.done()
	if _, _, ok := o.takeNow(100); ok {
		t.Fatal("takeNow after everything was taken: want false")
	}
}
