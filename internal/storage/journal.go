package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// op is what a journal entry undoes.
type op int

const (
	opWrite  op = iota // bytes written (or allocated) in a file: old bytes, old size
	opTrunc            // a file's size set: old size, the bytes it cut
	opCreate           // a name made in a directory: a file, a directory, a link or a symlink
	opUnlink           // a name removed; the file waits in the trash
	opRename           // a name moved; a file it replaced waits in the trash
	opRmdir            // an empty directory removed
)

// entry is one change not yet synced. Data entries (write, trunc) are
// their file's, in its list; the others are their directories', in
// each's list. seq orders them all, as they were made.
type entry struct {
	seq    uint64
	op     op
	ino    uint64 // the file (data entries), or the name's file
	synced bool   // a namespace entry made durable by one of its directories

	// Data entries: the range written (off, n), the bytes it overwrote
	// (old: those below oldSize) and the size before it.
	off, n  int64
	old     []byte
	oldSize int64

	// Namespace entries: the name in its directory (dir, name), where a
	// rename took it (toDir, toName), the file's place in the trash
	// (unlink, or a file a rename replaced), the mode of a removed
	// directory, and whether the name was a directory.
	dir, toDir   uint64
	name, toName string
	trash        string
	mode         uint32
	isDir        bool
	link         bool // a create that is a hard link: a file's sync makes durable the name that created it, not a link
}

// dirs are the directories whose sync makes a namespace entry durable.
func (e *entry) dirs() []uint64 {
	if e.op == opRename && e.toDir != e.dir {
		return []uint64{e.dir, e.toDir}
	}
	return []uint64{e.dir}
}

// journal is every change not yet synced. Its lock is the layer's.
type journal struct {
	seq     uint64
	data    map[uint64][]*entry // by file: its unsynced writes and truncations, in order
	names   map[uint64][]*entry // by directory: its unsynced namespace entries, in order
	created map[uint64]*entry   // by file: the create of a name not yet synced
}

func newJournal() journal {
	return journal{data: map[uint64][]*entry{}, names: map[uint64][]*entry{}, created: map[uint64]*entry{}}
}

// addData records a write or truncation of file ino.
func (j *journal) addData(e *entry) {
	j.seq++
	e.seq = j.seq
	j.data[e.ino] = append(j.data[e.ino], e)
}

// addName records a namespace change.
func (j *journal) addName(e *entry) {
	j.seq++
	e.seq = j.seq
	for _, d := range e.dirs() {
		j.names[d] = append(j.names[d], e)
	}
	if e.op == opCreate && !e.isDir && !e.link {
		j.created[e.ino] = e
	}
}

// syncFile makes file ino's data durable, and the name that created it.
func (j *journal) syncFile(ino uint64) {
	delete(j.data, ino)
	if e := j.created[ino]; e != nil {
		e.synced = true
		delete(j.created, ino)
	}
}

// syncDir makes directory ino's namespace changes durable; what waited
// in the trash for them is removed for good.
func (j *journal) syncDir(ino uint64) {
	for _, e := range j.names[ino] {
		if e.synced {
			continue
		}
		e.synced = true
		if e.trash != "" {
			os.RemoveAll(e.trash)
		}
		if e.op == opCreate && j.created[e.ino] == e {
			delete(j.created, e.ino)
		}
	}
	delete(j.names, ino)
}

// syncNames makes every namespace change so far durable, in every
// directory: a journaling file system's commit, which any fsync forces.
func (j *journal) syncNames() {
	for dir := range j.names {
		j.syncDir(dir)
	}
}

// pending is every unsynced entry, newest first, as a power failure
// undoes them.
func (j *journal) pending() []*entry {
	var out []*entry
	seen := map[*entry]bool{}
	for _, l := range j.data {
		out = append(out, l...)
	}
	for _, l := range j.names {
		for _, e := range l {
			if !e.synced && !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b *entry) int { return int(int64(b.seq) - int64(a.seq)) })
	return out
}

// tree finds files and directories by inode number in the backing folder
// and the trash, as they are now; a namespace change marks it stale.
type tree struct {
	root, trash string
	byIno       map[uint64]string
	stale       bool
}

func (t *tree) path(ino uint64) (string, bool) {
	if t.byIno == nil || t.stale {
		t.byIno = map[uint64]string{}
		for _, top := range []string{t.root, t.trash} {
			filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if info, err := d.Info(); err == nil {
					if st, ok := info.Sys().(*syscall.Stat_t); ok {
						if _, dup := t.byIno[st.Ino]; !dup {
							t.byIno[st.Ino] = p
						}
					}
				}
				return nil
			})
		}
		t.stale = false
	}
	p, ok := t.byIno[ino]
	return p, ok
}

// inoOf is the inode number of the name at p, without following a
// symbolic link.
func inoOf(p string) (uint64, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}

// undoData undoes a write or truncation of the file at p but for its
// first keep bytes (a torn write keeps a prefix of what it wrote).
func undoData(p string, e *entry, keep int64) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	switch e.op {
	case opWrite:
		if keep < int64(len(e.old)) {
			if _, err := f.WriteAt(e.old[keep:], e.off+keep); err != nil {
				return err
			}
		}
		if e.off+e.n > e.oldSize {
			size := e.oldSize
			if keep > 0 {
				size = max(e.oldSize, e.off+keep)
			}
			return f.Truncate(size)
		}
	case opTrunc:
		if err := f.Truncate(e.oldSize); err != nil {
			return err
		}
		if len(e.old) > 0 {
			_, err := f.WriteAt(e.old, e.oldSize-int64(len(e.old)))
			return err
		}
	}
	return nil
}

// undoName undoes a namespace entry, where what it changed is still as it
// left it.
func undoName(t *tree, e *entry) error {
	dir, ok := t.path(e.dir)
	if !ok {
		return nil // its directory is gone for good
	}
	p := filepath.Join(dir, e.name)
	t.stale = true
	switch e.op {
	case opCreate:
		if ino, ok := inoOf(p); ok && ino == e.ino {
			if e.isDir {
				return os.RemoveAll(p)
			}
			return os.Remove(p)
		}
	case opUnlink:
		if _, err := os.Lstat(e.trash); err == nil {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				return os.Rename(e.trash, p)
			}
		}
	case opRename:
		to, ok := t.path(e.toDir)
		if !ok {
			return nil
		}
		q := filepath.Join(to, e.toName)
		if ino, ok := inoOf(q); ok && ino == e.ino {
			if err := os.Rename(q, p); err != nil {
				return err
			}
		}
		if e.trash != "" {
			if _, err := os.Lstat(e.trash); err == nil {
				return os.Rename(e.trash, q)
			}
		}
	case opRmdir:
		if err := os.Mkdir(p, fs.FileMode(e.mode&0o777)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
