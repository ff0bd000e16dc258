package storage

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// eioFault is an I/O error fault in force: reads, writes or both of the
// files matching glob fail.
type eioFault struct {
	glob          string
	reads, writes bool
}

func (l *Layer) isFull() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.full
}

// wait is a slow disk's delay, before each write and each sync.
func (l *Layer) wait() {
	l.mu.Lock()
	d := l.slow
	l.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

func (l *Layer) failsEIO(rel string, write bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.eio == nil || write && !l.eio.writes || !write && !l.eio.reads {
		return false
	}
	return Match(l.eio.glob, rel)
}

// Match reports whether a file's path under the data folder (slashes,
// no leading slash) matches glob: path.Match over the whole path, or,
// for a glob with no slash, over its last element; "" and "*" match every
// file, and "DIR/**" every file under DIR.
func Match(glob, rel string) bool {
	rel = strings.TrimPrefix(filepath.ToSlash(rel), "/")
	if glob == "" || glob == "*" || glob == "**" {
		return true
	}
	if dir, ok := strings.CutSuffix(glob, "/**"); ok {
		return rel == dir || strings.HasPrefix(rel, dir+"/")
	}
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(rel))
		return ok
	}
	ok, _ := path.Match(glob, rel)
	return ok
}

// ValidGlob says whether glob is a pattern Match understands.
func ValidGlob(glob string) error {
	g := strings.TrimSuffix(glob, "/**")
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("bad glob %q: %v", glob, err)
	}
	return nil
}

// SetFull starts (on) or ends a full disk: every write, create, mkdir and
// growth fails with ENOSPC.
func (l *Layer) SetFull(on bool) {
	l.mu.Lock()
	l.full = on
	l.mu.Unlock()
}

// SetSlow makes each write and each sync wait d (0 ends it).
func (l *Layer) SetSlow(d time.Duration) {
	l.mu.Lock()
	l.slow = d
	l.mu.Unlock()
}

// SetEIO makes reads and/or writes of the files matching glob fail with
// EIO; neither ends it. The kernel's cached pages of the files are dropped,
// so that a read reaches the layer.
func (l *Layer) SetEIO(glob string, reads, writes bool) {
	l.mu.Lock()
	if !reads && !writes {
		l.eio = nil
	} else {
		l.eio = &eioFault{glob: glob, reads: reads, writes: writes}
	}
	l.mu.Unlock()
	if reads {
		for _, rel := range l.files(glob) {
			l.dropCache(rel)
		}
	}
}

// files are the regular files under the backing folder whose paths match
// glob, in order.
func (l *Layer) files(glob string) []string {
	var out []string
	filepath.WalkDir(l.backing, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(l.backing, p)
		if err == nil && Match(glob, rel) {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// dropCache drops the kernel's cached pages and attributes of the file,
// where the kernel has it.
func (l *Layer) dropCache(rel string) {
	l.mu.Lock()
	in := l.root
	l.mu.Unlock()
	for _, part := range strings.Split(rel, "/") {
		if in == nil {
			return
		}
		in = in.GetChild(part)
	}
	if in != nil {
		in.NotifyContent(0, 0)
	}
}

// CorruptSpec says how to corrupt files: one of Bits, Zero or Truncate.
type CorruptSpec struct {
	// Files is a glob (Match) of the files to corrupt; "" for all.
	Files string
	// Bits flips that many random bits, each in a random matching file
	// (one that is not empty) at a random offset of what it holds (see
	// Held).
	Bits int
	// Zero zeroes that many bytes at a random offset of what each
	// matching file holds (the whole file when it is shorter).
	Zero int64
	// Truncate cuts that many bytes off the end of each matching file.
	Truncate int64
}

// Corruption is what Corrupt did.
type Corruption struct {
	Flips   []Flip      `json:"flips,omitempty"`
	Zeroed  []FileRange `json:"zeroed,omitempty"`
	Cut     []FileRange `json:"truncated,omitempty"`
	Missing string      `json:"missing,omitempty"` // why nothing was corrupted
}

// Flip is one bit flipped.
type Flip struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Bit    int    `json:"bit"`
}

// FileRange is a range of a file zeroed or cut off.
type FileRange struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

// Corrupt corrupts the backing files matching the spec, as a disk's bad
// sectors or a stray write would, behind the programs' backs: what it
// changes is no write of theirs (a power failure does not undo it), and
// the kernel's cached pages of the files are dropped.
func (l *Layer) Corrupt(spec CorruptSpec) (Corruption, error) {
	var c Corruption
	var sized []string
	var sizes, held []int64
	for _, rel := range l.files(spec.Files) {
		if st, err := os.Stat(filepath.Join(l.backing, rel)); err == nil && st.Size() > 0 {
			h := st.Size()
			if spec.Bits > 0 || spec.Zero > 0 {
				if h, err = Held(filepath.Join(l.backing, rel)); err != nil {
					return c, err
				}
			}
			sized = append(sized, rel)
			sizes = append(sizes, st.Size())
			held = append(held, h)
		}
	}
	if len(sized) == 0 {
		c.Missing = fmt.Sprintf("no file that is not empty matches %q", spec.Files)
		return c, nil
	}
	l.mu.Lock()
	defer func() {
		l.mu.Unlock()
		for _, rel := range sized {
			l.dropCache(rel)
		}
	}()
	for range spec.Bits {
		i := l.rng.IntN(len(sized))
		f := Flip{Path: sized[i], Offset: l.rng.Int64N(held[i]), Bit: l.rng.IntN(8)}
		if err := flipBit(filepath.Join(l.backing, f.Path), f.Offset, f.Bit); err != nil {
			return c, err
		}
		c.Flips = append(c.Flips, f)
	}
	if spec.Zero > 0 {
		for i, rel := range sized {
			n := min(spec.Zero, sizes[i])
			r := FileRange{Path: rel, Offset: l.rng.Int64N(max(held[i], n) - n + 1), Length: n}
			if err := zeroRange(filepath.Join(l.backing, rel), r.Offset, n); err != nil {
				return c, err
			}
			c.Zeroed = append(c.Zeroed, r)
		}
	}
	if spec.Truncate > 0 {
		for i, rel := range sized {
			n := min(spec.Truncate, sizes[i])
			if err := os.Truncate(filepath.Join(l.backing, rel), sizes[i]-n); err != nil {
				return c, err
			}
			c.Cut = append(c.Cut, FileRange{Path: rel, Offset: sizes[i] - n, Length: n})
		}
	}
	return c, nil
}

// Held is how much of the file at p a corruption's random offsets range
// over: up to its last byte that is not zero, or the whole file when
// every byte is zero. A tail of zeroes is space preallocated for writes
// to come (etcd's WAL segments and ZooKeeper's transaction logs are 64 MB
// from their first record), which no reader reads: a flip there, where
// nearly every offset of a young log lies, would change nothing.
func Held(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	segs := dataSegments(f, st.Size())
	for i := len(segs) - 1; i >= 0; i-- {
		for end := segs[i][1]; end > segs[i][0]; {
			start := max(end-int64(len(buf)), segs[i][0])
			b := buf[:end-start]
			if _, err := f.ReadAt(b, start); err != nil {
				return 0, err
			}
			for j := len(b) - 1; j >= 0; j-- {
				if b[j] != 0 {
					return start + int64(j) + 1, nil
				}
			}
			end = start
		}
	}
	return st.Size(), nil
}

// dataSegments are the ranges of the file that hold data, as its file
// system says (SEEK_DATA, SEEK_HOLE): a hole, or space preallocated and
// never written, reads as zeroes and need not be read. The whole file
// where the file system cannot say.
func dataSegments(f *os.File, size int64) [][2]int64 {
	var segs [][2]int64
	fd := int(f.Fd())
	for off := int64(0); off < size; {
		d, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			break // no data past off
		}
		if err != nil {
			return [][2]int64{{0, size}}
		}
		h, err := unix.Seek(fd, d, unix.SEEK_HOLE)
		if err != nil {
			return [][2]int64{{0, size}}
		}
		segs = append(segs, [2]int64{d, min(h, size)})
		off = h
	}
	return segs
}

func flipBit(p string, off int64, bit int) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 1 << bit
	_, err = f.WriteAt(b, off)
	return err
}

func zeroRange(p string, off, n int64) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(make([]byte, n), off)
	return err
}
