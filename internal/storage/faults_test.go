package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, text string, sync bool) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPowerFailureUndoesUnsyncedDirectoryEntries(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	l.SetNames(POSIX)
	m := l.Mountpoint()
	// Durable before: u and z, synced and their directory too.
	writeFile(t, filepath.Join(m, "u"), "u", true)
	writeFile(t, filepath.Join(m, "z"), "z", true)
	syncDir(t, m)
	// Then: x never synced; y synced (its data and its name); z renamed
	// to w and u unlinked, the directory not synced; sub made and synced,
	// with s in it and sub synced.
	writeFile(t, filepath.Join(m, "x"), "x", false)
	writeFile(t, filepath.Join(m, "y"), "y", true)
	if err := os.Rename(filepath.Join(m, "z"), filepath.Join(m, "w")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(m, "u")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(m, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(m, "sub", "s"), "s", false)
	syncDir(t, filepath.Join(m, "sub"))
	loss, err := l.PowerFail(LoseUnsynced)
	if err != nil {
		t.Fatal(err)
	}
	b := l.Backing()
	for name, want := range map[string]string{"u": "u", "z": "z", "y": "y", "x": "", "w": "", "sub": ""} {
		got, err := os.ReadFile(filepath.Join(b, name))
		switch {
		case want == "" && !errors.Is(err, os.ErrNotExist):
			t.Errorf("%s is there after the power failure (%v), want it gone", name, err)
		case want != "" && string(got) != want:
			t.Errorf("%s holds %q (%v), want %q", name, got, err, want)
		}
	}
	if len(loss.Entries) < 4 {
		t.Errorf("loss names %d entries, want at least 4 (x, w, u, sub): %+v", len(loss.Entries), loss.Entries)
	}
	if ents, _ := os.ReadDir(b + ".trash"); len(ents) > 0 {
		t.Errorf("the trash keeps %d files after the power failure", len(ents))
	}
}

func TestRenameOverAFileIsUndoneWithTheFileItReplaced(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	l.SetNames(POSIX)
	m := l.Mountpoint()
	writeFile(t, filepath.Join(m, "conf"), "old", true)
	syncDir(t, m)
	writeFile(t, filepath.Join(m, "conf.tmp"), "new", true)
	if err := os.Rename(filepath.Join(m, "conf.tmp"), filepath.Join(m, "conf")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "conf")); string(got) != "old" {
		t.Errorf("conf holds %q after a rename the directory never synced, want %q", got, "old")
	}
	// With the directory synced, the rename holds.
	if err := l.Mount(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(m, "conf.tmp"), "new", true)
	if err := os.Rename(filepath.Join(m, "conf.tmp"), filepath.Join(m, "conf")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, m)
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "conf")); string(got) != "new" {
		t.Errorf("conf holds %q after a synced rename, want %q", got, "new")
	}
}

func TestTruncationIsUndone(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	p := filepath.Join(l.Mountpoint(), "f")
	writeFile(t, p, "0123456789", true)
	if err := os.Truncate(p, 4); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("xy")
	f.Close()
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "f")); string(got) != "0123456789" {
		t.Errorf("after the power failure f holds %q, want the synced %q", got, "0123456789")
	}
}

func TestOSyncWritesAreSynced(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	p := filepath.Join(l.Mountpoint(), "f")
	writeFile(t, p, "", true)
	f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_DSYNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("durable")
	f.Close()
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "f")); string(got) != "durable" {
		t.Errorf("an O_DSYNC write was lost: f holds %q", got)
	}
}

func TestFullDiskFailsWritesWithENOSPC(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	p := filepath.Join(l.Mountpoint(), "f")
	writeFile(t, p, "a", true)
	l.SetFull(true)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("b")
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a write on a full disk: %v, want ENOSPC", err)
	}
	if _, err := os.Create(filepath.Join(l.Mountpoint(), "g")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a create on a full disk: %v, want ENOSPC", err)
	}
	l.SetFull(false)
	f, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if _, err := f.WriteString("b"); err != nil {
		t.Errorf("a write once the disk has room: %v", err)
	}
	f.Close()
}

func TestEIOFailsMatchingFilesOnly(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	m := l.Mountpoint()
	os.Mkdir(filepath.Join(m, "wal"), 0o755)
	writeFile(t, filepath.Join(m, "wal", "0.wal"), "log", true)
	writeFile(t, filepath.Join(m, "db"), "db", true)
	os.ReadFile(filepath.Join(m, "wal", "0.wal")) // in the kernel's cache
	l.SetEIO("*.wal", true, false)
	if _, err := os.ReadFile(filepath.Join(m, "wal", "0.wal")); !errors.Is(err, syscall.EIO) {
		t.Errorf("reading a matching file: %v, want EIO", err)
	}
	if got, err := os.ReadFile(filepath.Join(m, "db")); err != nil || string(got) != "db" {
		t.Errorf("reading another file: %q, %v", got, err)
	}
	l.SetEIO("", false, false)
	if got, err := os.ReadFile(filepath.Join(m, "wal", "0.wal")); err != nil || string(got) != "log" {
		t.Errorf("after the fault: %q, %v", got, err)
	}
}

func TestCorruptFlipsTheBitsItRecords(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 7)
	m := l.Mountpoint()
	orig := bytes.Repeat([]byte{0x55}, 4096)
	writeFile(t, filepath.Join(m, "data.blk"), string(orig), true)
	writeFile(t, filepath.Join(m, "other"), string(orig), true)
	c, err := l.Corrupt(CorruptSpec{Files: "*.blk", Bits: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Flips) != 3 {
		t.Fatalf("%d flips recorded, want 3", len(c.Flips))
	}
	got, _ := os.ReadFile(filepath.Join(m, "data.blk"))
	want := append([]byte{}, orig...)
	for _, f := range c.Flips {
		if f.Path != "data.blk" {
			t.Errorf("a flip in %s, which does not match *.blk", f.Path)
		}
		want[f.Offset] ^= 1 << f.Bit
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the file read through the mount is not the original with the recorded flips")
	}
	if other, _ := os.ReadFile(filepath.Join(m, "other")); !bytes.Equal(other, orig) {
		t.Errorf("a file the glob does not match changed")
	}
	c, err = l.Corrupt(CorruptSpec{Files: "other", Truncate: 100})
	if err != nil || len(c.Cut) != 1 {
		t.Fatalf("truncate: %+v, %v", c, err)
	}
	if st, _ := os.Stat(filepath.Join(m, "other")); st.Size() != 4096-100 {
		t.Errorf("other has %d bytes after cutting 100", st.Size())
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		glob, rel string
		want      bool
	}{
		{"", "a/b", true},
		{"*.wal", "member/wal/0.wal", true},
		{"*.wal", "member/snap/db", false},
		{"member/wal/*", "member/wal/0.wal", true},
		{"member/*", "member/wal/0.wal", false},
		{"member/**", "member/wal/0.wal", true},
		{"member/**", "memberx/a", false},
	} {
		if got := Match(c.glob, c.rel); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.glob, c.rel, got, c.want)
		}
	}
}

// A file opened write-only, preallocated (fallocate) and overwritten,
// as a write-ahead log is: a power failure restores what the unsynced
// writes overwrote, and the size the last sync saw.
func TestWriteOnlyPreallocatedFile(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	p := filepath.Join(l.Mountpoint(), "0.wal")
	writeFile(t, p, "synced", true)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, 1<<16); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("OVER"), 2); err != nil {
		t.Fatalf("a write through a write-only file: %v", err)
	}
	f.Close()
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "0.wal")); string(got) != "synced" {
		t.Errorf("after the power failure 0.wal holds %d bytes (%.12q), want %q", len(got), got, "synced")
	}
}

// Under the journal model, any sync makes every directory entry made
// before it durable, the data of other files still not: a directory made
// and never synced survives a file's fsync after it; a file created after
// the last sync does not.
func TestJournalNamesCommitAtAnySync(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	m := l.Mountpoint()
	if err := os.Mkdir(filepath.Join(m, "member"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(m, "member", "unsynced"), "data", false)
	writeFile(t, filepath.Join(m, "member", "wal"), "log", true) // commits member/ and member/unsynced's name
	writeFile(t, filepath.Join(m, "late"), "x", false)
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	b := l.Backing()
	if got, _ := os.ReadFile(filepath.Join(b, "member", "wal")); string(got) != "log" {
		t.Errorf("member/wal holds %q, want the synced %q", got, "log")
	}
	if got, err := os.ReadFile(filepath.Join(b, "member", "unsynced")); err != nil || len(got) != 0 {
		t.Errorf("member/unsynced: %q, %v; want its name kept and its unsynced data lost", got, err)
	}
	if _, err := os.Stat(filepath.Join(b, "late")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file created after the last sync survived: %v", err)
	}
}

// Durable makes a file written before a host's processes start durable,
// with the folders that lead to it, and nothing else.
func TestDurableKeepsOneFile(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 1)
	l.SetNames(POSIX)
	m := l.Mountpoint()
	os.Mkdir(filepath.Join(m, "conf"), 0o755)
	writeFile(t, filepath.Join(m, "conf", "myid"), "3", false)
	writeFile(t, filepath.Join(m, "other"), "x", false)
	l.Durable("conf/myid")
	if _, err := l.PowerFail(LoseUnsynced); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(l.Backing(), "conf", "myid")); string(got) != "3" {
		t.Errorf("conf/myid holds %q after the power failure, want %q", got, "3")
	}
	if _, err := os.Stat(filepath.Join(l.Backing(), "other")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file Durable did not name survived: %v", err)
	}
}

// A log preallocated with zeroes, as etcd's WAL and ZooKeeper's
// transaction log are: the flips and the zeroed range land in its
// records, not in the tail no reader reads.
func TestCorruptSparesThePreallocatedTail(t *testing.T) {
	fuseOrSkip(t)
	l := layer(t, 3)
	p := filepath.Join(l.Mountpoint(), "log.1")
	records := bytes.Repeat([]byte{0x55}, 300)
	writeFile(t, p, string(records), true)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, 4<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0}, 8<<20-1); err != nil { // and a sparse tail beyond, as ZooKeeper pads
		t.Fatal(err)
	}
	f.Close()
	c, err := l.Corrupt(CorruptSpec{Files: "log.*", Bits: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range c.Flips {
		if fl.Offset >= int64(len(records)) {
			t.Errorf("a flip at byte %d, past the %d bytes of records, in the preallocated zeroes", fl.Offset, len(records))
		}
	}
	c, err = l.Corrupt(CorruptSpec{Files: "log.*", Zero: 10})
	if err != nil || len(c.Zeroed) != 1 {
		t.Fatalf("zero: %+v, %v", c, err)
	}
	if z := c.Zeroed[0]; z.Offset+z.Length > int64(len(records)) {
		t.Errorf("zeroed %d bytes at %d, past the %d bytes of records", z.Length, z.Offset, len(records))
	}
	if st, _ := os.Stat(p); st.Size() != 8<<20 {
		t.Errorf("the log has %d bytes after its corruption, want %d", st.Size(), 8<<20)
	}
}

func TestHeld(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		size    int64
		nonzero []int64
		want    int64
	}{
		{"all zeroes", 5000, nil, 5000},
		{"no tail", 10, []int64{0, 9}, 10},
		{"a tail", 3 << 20, []int64{0, 99}, 100},
		{"the last byte of a chunk", 3 << 20, []int64{3<<20 - 1<<20 - 1}, 2 << 20},
		{"the first byte of a chunk", 3 << 20, []int64{2 << 20}, 2<<20 + 1},
		{"the first byte", 1 << 21, []int64{0}, 1},
	} {
		p := filepath.Join(dir, "f")
		b := make([]byte, c.size)
		for _, i := range c.nonzero {
			b[i] = 7
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := Held(p); err != nil || got != c.want {
			t.Errorf("%s: Held = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	// Sparse files: holes before, between and after the data.
	for _, c := range []struct {
		name string
		at   []int64 // a byte 7 written at each, the rest holes
		size int64
		want int64
	}{
		{"a hole after", []int64{99}, 8 << 20, 100},
		{"holes between", []int64{0, 5<<20 + 5}, 8 << 20, 5<<20 + 6},
		{"a hole before", []int64{3 << 20}, 3<<20 + 1, 3<<20 + 1},
		{"only a hole", nil, 4 << 20, 4 << 20},
	} {
		p := filepath.Join(dir, "sparse")
		os.Remove(p)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range c.at {
			if _, err := f.WriteAt([]byte{7}, at); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Truncate(c.size); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, err := Held(p); err != nil || got != c.want {
			t.Errorf("%s: Held = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}
