package sim

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/coupharness/coup/nemesis"
)

// A write is durable once synced: a power failure loses what came after,
// keeps what came before; a plain crash (nothing done to the disk) keeps
// both.
func TestDiskPowerFailure(t *testing.T) {
	d := newDisk(1, "n1")
	d.Write("vote", []byte("term 1"))
	d.Sync("vote")
	d.Write("vote", []byte("term 2"))
	d.Write("new", []byte("x"))
	if got, _ := d.Read("vote"); string(got) != "term 2" {
		t.Fatalf("before the failure vote holds %q, want the last write", got)
	}
	loss := d.powerFail(nemesis.LoseUnsynced)
	if got, _ := d.Read("vote"); string(got) != "term 1" {
		t.Errorf("after lose-unsynced vote holds %q, want the synced %q", got, "term 1")
	}
	if _, err := d.Read("new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file never synced is still there: %v", err)
	}
	if len(loss.Files) != 2 || loss.Files[1].Path != "vote" || loss.Files[1].Lost != 6 || loss.Files[1].Synced != 6 {
		t.Errorf("loss %+v", loss)
	}
}

// Torn keeps a prefix of the unsynced writes, the last one cut: what the
// file holds is the synced state, or a write, or the bytes of a write
// over the state before it; the seed decides, and replays.
func TestDiskTorn(t *testing.T) {
	results := map[string]bool{}
	for seed := int64(1); seed <= 20; seed++ {
		d := newDisk(seed, "n1")
		d.Write("f", []byte("AAAAAAAA"))
		d.Sync("f")
		d.Write("f", []byte("BBBBBBBB"))
		d.Write("f", []byte("CCCC"))
		d.powerFail(nemesis.Torn)
		got, _ := d.Read("f")
		ok := false
		for _, base := range []string{"AAAAAAAA", "BBBBBBBB"} {
			for _, w := range []string{"BBBBBBBB", "CCCC"} {
				for c := 0; c <= len(w); c++ {
					want := w[:c]
					if len(base) > c {
						want += base[c:]
					}
					if string(got) == want {
						ok = true
					}
				}
			}
		}
		if !ok && string(got) != "CCCC" {
			t.Errorf("seed %d: torn left %q, no prefix of the writes over the state before", seed, got)
		}
		results[string(got)] = true
		d2 := newDisk(seed, "n1")
		d2.Write("f", []byte("AAAAAAAA"))
		d2.Sync("f")
		d2.Write("f", []byte("BBBBBBBB"))
		d2.Write("f", []byte("CCCC"))
		d2.powerFail(nemesis.Torn)
		if again, _ := d2.Read("f"); !bytes.Equal(again, got) {
			t.Errorf("seed %d: %q, then %q", seed, got, again)
		}
	}
	if len(results) < 3 {
		t.Errorf("20 seeds tore the writes %d ways: %v", len(results), results)
	}
}

// Disk faults: full and eio fail writes and reads; corrupt flips the
// bits it records.
func TestDiskFaults(t *testing.T) {
	d := newDisk(1, "n1")
	d.Write("log", []byte{0, 0, 0, 0})
	d.Sync("log")
	d.full = true
	if err := d.Write("log", []byte("x")); !errors.Is(err, ErrNoSpace) {
		t.Errorf("a write on a full disk: %v", err)
	}
	d.full = false
	d.eio = &diskEIO{glob: "*.db", reads: true}
	if _, err := d.Read("log"); err != nil {
		t.Errorf("reading a file eio does not match: %v", err)
	}
	d.Write("a.db", []byte("x"))
	if _, err := d.Read("a.db"); !errors.Is(err, ErrIO) {
		t.Errorf("reading a matching file: %v", err)
	}
	d.eio = nil
	c, _ := d.corrupt(nemesis.DiskFault{Files: "log", Bits: 1})
	got, _ := d.Read("log")
	if len(c.Flips) != 1 || got[c.Flips[0].Offset] != 1<<c.Flips[0].Bit {
		t.Errorf("flips %+v, log %v", c.Flips, got)
	}
	d.powerFail(nemesis.LoseUnsynced)
	if again, _ := d.Read("log"); !bytes.Equal(again, got) {
		t.Errorf("a power failure undid a corruption: %v, then %v", got, again)
	}
	// A log preallocated with zeroes: every flip lands in its records.
	d.Write("wal", append(bytes.Repeat([]byte{0x55}, 20), make([]byte, 4000)...))
	c, _ = d.corrupt(nemesis.DiskFault{Files: "wal", Bits: 30})
	for _, f := range c.Flips {
		if f.Offset >= 20 {
			t.Errorf("a flip at byte %d, past the 20 bytes of records", f.Offset)
		}
	}
}
