package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/nemesis"
)

// Storage is what a Machine may keep across its crashes and restarts: a
// node's disk of named files, each written whole. A write is not durable
// until its file is synced: a power failure (a crash with disk =
// "lose-unsynced" or "torn") loses what was written since, and a plain
// crash keeps it (the page cache of a machine that kept its power). A
// Machine reaches it through coup.StorageOf(env), and reads it back when it
// starts again.
type Storage interface {
	// Write replaces what the file name holds with data (a copy). It
	// fails with ErrNoSpace on a full disk and ErrIO under an eio fault.
	Write(name string, data []byte) error
	// Sync makes durable every write to name so far.
	Sync(name string) error
	// Read returns what name holds now (its last write, synced or not):
	// fs.ErrNotExist when nothing was ever written, ErrIO under an eio
	// fault.
	Read(name string) ([]byte, error)
}

// The storage errors.
var (
	ErrNoSpace = errors.New("no space left on device")
	ErrIO      = errors.New("input/output error")
)

// disk is one simulated node's disk: it outlives the node's incarnations.
// Every random choice of its faults (a torn write's cut, a corruption's
// bits) comes from its own seeded stream, so that a seed replays them.
type disk struct {
	files map[string]*simFile
	rng   *rand.Rand
	full  bool
	eio   *diskEIO
}

type diskEIO struct {
	glob          string
	reads, writes bool
}

// simFile is a file of the disk: what the last sync made durable, and the
// writes since, in order (the last is what it holds now).
type simFile struct {
	durable []byte
	exists  bool // durable exists
	pending [][]byte
}

func (f *simFile) now() ([]byte, bool) {
	if n := len(f.pending); n > 0 {
		return f.pending[n-1], true
	}
	return f.durable, f.exists
}

func newDisk(seed int64, name string) *disk {
	return &disk{files: map[string]*simFile{}, rng: rand.New(rand.NewPCG(uint64(seed), nodeSeed(seed, name)^0xd15c))}
}

var _ Storage = (*disk)(nil)

func (d *disk) failsEIO(name string, write bool) bool {
	if d.eio == nil || write && !d.eio.writes || !write && !d.eio.reads {
		return false
	}
	return matchFile(d.eio.glob, name)
}

// matchFile is the storage layer's glob rule: a glob with a slash against
// the whole name, one without against its last element, "" for all.
func matchFile(glob, name string) bool {
	if glob == "" || glob == "*" || glob == "**" {
		return true
	}
	if dir, ok := strings.CutSuffix(glob, "/**"); ok {
		return name == dir || strings.HasPrefix(name, dir+"/")
	}
	if !strings.Contains(glob, "/") {
		ok, _ := path.Match(glob, path.Base(name))
		return ok
	}
	ok, _ := path.Match(glob, name)
	return ok
}

func (d *disk) Write(name string, data []byte) error {
	switch {
	case d.full:
		return ErrNoSpace
	case d.failsEIO(name, true):
		return ErrIO
	}
	f := d.files[name]
	if f == nil {
		f = &simFile{}
		d.files[name] = f
	}
	f.pending = append(f.pending, slices.Clone(data))
	return nil
}

func (d *disk) Sync(name string) error {
	if d.failsEIO(name, true) {
		return ErrIO
	}
	f := d.files[name]
	if f == nil || len(f.pending) == 0 {
		return nil
	}
	f.durable, f.exists = f.pending[len(f.pending)-1], true
	f.pending = nil
	return nil
}

func (d *disk) Read(name string) ([]byte, error) {
	if d.failsEIO(name, false) {
		return nil, ErrIO
	}
	f := d.files[name]
	if f == nil {
		return nil, fs.ErrNotExist
	}
	data, ok := f.now()
	if !ok {
		return nil, fs.ErrNotExist
	}
	return slices.Clone(data), nil
}

// fileLoss is what a power failure took from one file, in the storage
// layer's words (internal/storage.FileLoss): its size at the last sync,
// its size at the failure, the bytes written since and those lost.
type fileLoss struct {
	Path     string `json:"path"`
	Synced   int64  `json:"synced"`
	Size     int64  `json:"size"`
	Unsynced int64  `json:"unsynced"`
	Lost     int64  `json:"lost"`
	Writes   int    `json:"writes"`
}

type diskLoss struct {
	Mode  nemesis.PowerFail `json:"mode"`
	Files []fileLoss        `json:"files,omitempty"`
}

// powerFail loses what was not synced: every write (lose-unsynced), or
// all but a random prefix of each file's unsynced writes, the last one
// kept torn, its first bytes over the old ones (torn).
func (d *disk) powerFail(mode nemesis.PowerFail) diskLoss {
	loss := diskLoss{Mode: mode}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range d.files {
			if !yield(n) {
				return
			}
		}
	}) {
		f := d.files[name]
		if len(f.pending) == 0 {
			continue
		}
		cur, _ := f.now()
		fl := fileLoss{Path: name, Synced: int64(len(f.durable)), Size: int64(len(cur)), Writes: len(f.pending)}
		for _, w := range f.pending {
			fl.Unsynced += int64(len(w))
		}
		fl.Lost = fl.Unsynced
		if mode == nemesis.Torn {
			k := d.rng.IntN(len(f.pending) + 1) // writes kept whole
			base, exists := f.durable, f.exists
			var kept int64
			for _, w := range f.pending[:k] {
				base, exists = w, true
				kept += int64(len(w))
			}
			if k < len(f.pending) {
				w := f.pending[k]
				c := d.rng.IntN(len(w) + 1)
				if c > 0 {
					torn := slices.Clone(w[:c])
					if len(base) > c {
						torn = append(torn, base[c:]...)
					}
					base, exists = torn, true
					kept += int64(c)
				}
			}
			f.durable, f.exists = base, exists
			fl.Lost = fl.Unsynced - kept
		}
		f.pending = nil
		if !f.exists {
			delete(d.files, name)
		}
		loss.Files = append(loss.Files, fl)
	}
	return loss
}

type flip struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Bit    int    `json:"bit"`
}

type corruption struct {
	Flips   []flip `json:"flips,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// corrupt flips random bits of the files matching the glob, durable and
// current alike (the disk's bytes), or zeroes or cuts them.
// held is how much of a file a corruption's random offsets range over,
// as on a real server's disk (storage.Held): up to its last byte that is
// not zero (a tail of zeroes is preallocated space no reader reads), or
// the whole file when every byte is zero.
func held(b []byte) int64 {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0 {
			return int64(i) + 1
		}
	}
	return int64(len(b))
}

func (d *disk) corrupt(df nemesis.DiskFault) (corruption, []string) {
	var c corruption
	var names []string
	for name, f := range d.files {
		if cur, ok := f.now(); ok && len(cur) > 0 && matchFile(df.Files, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		c.Missing = fmt.Sprintf("no file that is not empty matches %q", df.Files)
		return c, nil
	}
	// Every copy the file has on the disk changes alike.
	alter := func(f *simFile, fn func([]byte) []byte) {
		if f.exists {
			f.durable = fn(slices.Clone(f.durable))
		}
		for i := range f.pending {
			f.pending[i] = fn(slices.Clone(f.pending[i]))
		}
	}
	var lines []string
	for range df.Bits {
		name := names[d.rng.IntN(len(names))]
		f := d.files[name]
		cur, _ := f.now()
		fl := flip{Path: name, Offset: d.rng.Int64N(held(cur)), Bit: d.rng.IntN(8)}
		alter(f, func(b []byte) []byte {
			if fl.Offset < int64(len(b)) {
				b[fl.Offset] ^= 1 << fl.Bit
			}
			return b
		})
		c.Flips = append(c.Flips, fl)
		lines = append(lines, fmt.Sprintf("%s: bit %d of byte %d flipped", fl.Path, fl.Bit, fl.Offset))
	}
	for _, name := range names {
		f := d.files[name]
		cur, _ := f.now()
		size := int64(len(cur))
		switch {
		case df.Zero > 0:
			n := min(df.Zero, size)
			off := d.rng.Int64N(max(held(cur), n) - n + 1)
			alter(f, func(b []byte) []byte {
				for i := off; i < off+n && i < int64(len(b)); i++ {
					b[i] = 0
				}
				return b
			})
			lines = append(lines, fmt.Sprintf("%s: %d bytes zeroed at %d", name, n, off))
		case df.Truncate > 0:
			n := min(df.Truncate, size)
			alter(f, func(b []byte) []byte { return b[:max(int64(len(b))-n, 0)] })
			lines = append(lines, fmt.Sprintf("%s: cut to %d bytes (%d off)", name, size-n, n))
		}
	}
	return c, lines
}

var (
	_ nemesis.PowerFailer = (*Sim)(nil)
	_ nemesis.Disker      = (*Sim)(nil)
)

// PowerFail is a power failure of nodes (nemesis.PowerFailer): each that
// is up crashes, all of them first, then each disk loses what was not
// synced. The nodes stay down until restarted.
func (s *Sim) PowerFail(names []string, mode nemesis.PowerFail, fault string) error {
	var ns []*node
	for _, name := range names {
		n, err := s.member(name)
		if err != nil {
			return err
		}
		ns = append(ns, n)
	}
	for _, n := range ns {
		if n.state == up {
			n.end(history.ProcCrash)
		}
	}
	for _, n := range ns {
		loss := n.storage().powerFail(mode)
		var parts []string
		for _, f := range loss.Files {
			parts = append(parts, fmt.Sprintf("%s: %d of %d unsynced bytes lost, synced to offset %d", f.Path, f.Lost, f.Unsynced, f.Synced))
		}
		detail := strings.Join(parts, "; ")
		if detail == "" {
			detail = "nothing: every write had been synced"
		}
		v, _ := json.Marshal(loss)
		s.record(history.Event{Kind: history.KindDisk, Node: n.name, Name: fault, What: history.DiskLost, Detail: detail, Value: string(v)})
		for _, f := range loss.Files {
			s.cnt.other.add(history.CountDiskLostBytes, f.Lost)
			if f.Lost > 0 {
				s.cnt.other.add(history.CountDiskLostFiles, 1)
			}
		}
	}
	return nil
}

// Disk starts or ends a disk fault on a node's disk (nemesis.Disker). A
// slow disk has no meaning on the virtual clock, where a sync takes no
// time; validation refuses it before the run.
func (s *Sim) Disk(name string, df nemesis.DiskFault, start bool) error {
	n, err := s.member(name)
	if err != nil {
		return err
	}
	d := n.storage()
	switch df.Mode {
	case nemesis.DiskCorrupt:
		c, lines := d.corrupt(df)
		detail := strings.Join(lines, "; ")
		if detail == "" {
			detail = "nothing: " + c.Missing
		}
		v, _ := json.Marshal(c)
		s.record(history.Event{Kind: history.KindDisk, Node: name, Name: df.Fault, What: history.DiskCorrupted, Detail: detail, Value: string(v)})
		s.cnt.other.add(history.CountDiskFlips, int64(len(c.Flips)))
	case nemesis.DiskFull:
		d.full = start
	case nemesis.DiskEIO:
		d.eio = nil
		if start {
			d.eio = &diskEIO{glob: df.Files, reads: df.Ops != "write", writes: df.Ops != "read"}
		}
	default:
		return fmt.Errorf("a %s disk has no meaning on the simulator's virtual clock", df.Mode)
	}
	return nil
}

// Storage is the node's disk (the env's, for coup.StorageOf).
func (e *env) Storage() Storage { return e.n.storage() }

// storage is the node's disk, made when first used: most runs use none.
// Its random source is the node's own, whenever it is made.
func (n *node) storage() *disk {
	if n.disk == nil {
		n.disk = newDisk(n.s.cfg.Seed, n.name)
	}
	return n.disk
}
