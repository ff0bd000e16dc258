package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FSName is the file system type of the layer's mounts as the kernel
// shows them (fuse.coup in /proc/self/mountinfo): Sweep finds leftovers
// by it.
const FSName = "coup"

// Layer is one data folder through the storage layer: its files live in
// Backing, and show at Mount while it is mounted. A Layer outlives its
// mounts: a power failure unmounts it, loses what was not synced, and a
// restart mounts it again. Its methods are safe for concurrent use.
type Layer struct {
	backing, mountpoint, trash string

	mu      sync.Mutex
	j       journal
	rng     *rand.Rand
	server  *fuse.Server
	trashN  int
	full    bool
	slow    time.Duration
	eio     *eioFault
	root    *fs.Inode
	counted Counts
	names   Names
}

// Names is when directory entries (creates, unlinks, renames, mkdirs,
// rmdirs) become durable.
type Names string

// The name models.
const (
	// Journal makes every entry made so far durable at any sync, of a file
	// or a directory, as the journal of ext4 or XFS does: an fsync commits
	// the journal's whole transaction, every directory's changes in it.
	// The default: what programs written for Linux's file systems count
	// on.
	Journal Names = "journal"
	// POSIX makes a directory's entries durable only at that directory's
	// own fsync, as POSIX asks (and a file's fsync the name that created
	// it, as every Linux file system gives): the strict model, which finds
	// a program that never syncs the directory it creates files in.
	POSIX Names = "posix"
)

// SetNames chooses when directory entries become durable (Journal by
// default).
func (l *Layer) SetNames(n Names) {
	l.mu.Lock()
	l.names = n
	l.mu.Unlock()
}

// Counts are what the layer saw since it was made: for tests, the bench
// and the run's log.
type Counts struct {
	Writes, Syncs, DirSyncs int
}

// New is a layer over the backing folder (made if missing), to be mounted
// at mountpoint; seed seeds its random choices (torn writes' cuts,
// corruption's bits), so that a run replays them.
func New(backing, mountpoint string, seed int64) (*Layer, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	mountpoint, err = filepath.Abs(mountpoint)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(backing, 0o755); err != nil {
		return nil, err
	}
	trash := backing + ".trash"
	if err := os.MkdirAll(trash, 0o700); err != nil {
		return nil, err
	}
	return &Layer{backing: backing, mountpoint: mountpoint, trash: trash, j: newJournal(), names: Journal,
		rng: rand.New(rand.NewPCG(uint64(seed), 0x5707a6e))}, nil
}

// Backing is the folder that holds the files.
func (l *Layer) Backing() string { return l.backing }

// Mountpoint is where the files show while the layer is mounted.
func (l *Layer) Mountpoint() string { return l.mountpoint }

// Counts are the writes and syncs the layer has seen.
func (l *Layer) Counts() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counted
}

// Mounted reports whether the layer is mounted.
func (l *Layer) Mounted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.server != nil
}

// Available says why FUSE cannot be had by this process (nil when it
// can): the reason a scenario that needs the layer is refused before it
// starts.
func Available() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("the storage layer needs FUSE and this machine has no /dev/fuse (load the fuse module)")
	}
	if os.Geteuid() == 0 {
		return nil
	}
	if err := syscall.Access("/dev/fuse", 6); err != nil { // R_OK|W_OK
		mode := ""
		if st, err := os.Stat("/dev/fuse"); err == nil {
			mode = fmt.Sprintf(" (mode %04o, owner uid %d)", st.Mode().Perm(), st.Sys().(*syscall.Stat_t).Uid)
		}
		return fmt.Errorf("the storage layer needs FUSE: /dev/fuse%s cannot be opened by uid %d, so neither fusermount3 "+
			"nor a user namespace can mount it; run as root, or give users /dev/fuse (mode 0666, the usual)", mode, os.Geteuid())
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if _, err := exec.LookPath("fusermount"); err != nil {
			return fmt.Errorf("the storage layer needs fusermount3 to mount FUSE as uid %d (apt-get install fuse3)", os.Geteuid())
		}
	}
	return nil
}

// Mount mounts the layer at its mount point (made if missing, and empty).
func (l *Layer) Mount() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.server != nil {
		return nil
	}
	if err := Available(); err != nil {
		return err
	}
	if err := os.MkdirAll(l.mountpoint, 0o755); err != nil {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(l.backing, &st); err != nil {
		return err
	}
	lr := &fs.LoopbackRoot{Path: l.backing, Dev: uint64(st.Dev)}
	lr.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, l: l}
	}
	rootNode := lr.NewNode(lr, nil, "", &st)
	lr.RootNode = rootNode
	second := time.Second
	root := os.Geteuid() == 0
	opts := &fs.Options{
		EntryTimeout: &second,
		AttrTimeout:  &second,
		MountOptions: fuse.MountOptions{
			FsName: l.backing,
			Name:   FSName,
			// As root, mount(2) itself; a host's processes may run as
			// another user, who must see the files (allow_other).
			DirectMount: root,
			AllowOther:  root,
			// Reads and writes of many requests at once, as a disk.
			MaxBackground: 64,
		},
	}
	server, err := fs.Mount(l.mountpoint, rootNode, opts)
	if err != nil {
		return fmt.Errorf("mount the storage layer at %s: %w", l.mountpoint, err)
	}
	l.server = server
	l.root = rootNode.EmbeddedInode()
	return nil
}

// Unmount unmounts the layer, lazily when something still holds it (the
// mount goes once the last file is closed); it is a no-op when it is not
// mounted.
func (l *Layer) Unmount() error {
	l.mu.Lock()
	server := l.server
	l.server, l.root = nil, nil
	l.mu.Unlock()
	if server == nil {
		return nil
	}
	if err := server.Unmount(); err != nil {
		if err := detach(l.mountpoint); err != nil {
			return fmt.Errorf("unmount %s: %w", l.mountpoint, err)
		}
		return nil
	}
	done := make(chan struct{})
	go func() { server.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return nil
}

// detach unmounts mountpoint lazily: at once for new lookups, for good
// once nothing holds it.
func detach(mountpoint string) error {
	if os.Geteuid() == 0 {
		err := syscall.Unmount(mountpoint, syscall.MNT_DETACH)
		if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOENT) {
			return nil // unmounted, or not a mount point any more
		}
		return err
	}
	for _, prog := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(prog); err == nil {
			if out, err := exec.Command(p, "-u", "-z", mountpoint).CombinedOutput(); err != nil {
				return fmt.Errorf("%s -u -z: %v: %s", prog, err, out)
			}
			return nil
		}
	}
	return fmt.Errorf("no fusermount3 to unmount it")
}

// Settle makes everything in the backing folder durable, as it is now: the
// files written before a host's first start (a server's configuration, a
// ZooKeeper myid), which a machine's provisioning would have synced.
func (l *Layer) Settle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.j = newJournal()
	l.emptyTrash()
}

func (l *Layer) emptyTrash() {
	if ents, err := os.ReadDir(l.trash); err == nil {
		for _, e := range ents {
			os.RemoveAll(filepath.Join(l.trash, e.Name()))
		}
	}
}

// trashPath is a new name in the trash.
func (l *Layer) trashPath() string {
	l.trashN++
	return filepath.Join(l.trash, fmt.Sprintf("t%d", l.trashN))
}

// PowerFailMode is what a power failure does to unsynced writes.
type PowerFailMode string

// The power failure modes.
const (
	// LoseUnsynced loses every write not yet synced, and every directory
	// entry.
	LoseUnsynced PowerFailMode = "lose-unsynced"
	// Torn keeps, of each file, a random prefix of its unsynced writes in
	// the order they were made, the last one kept cut at a sector
	// boundary of the file; directory entries not synced are lost.
	Torn PowerFailMode = "torn"
)

// Sector is the unit a disk writes whole or not at all: a torn write
// keeps a prefix of it that ends at a multiple of Sector in its file (or
// all of it). etcd's WAL, for one, tells a torn record from a corrupt one
// by a sector of zeroes.
const Sector = 512

// Loss is what a power failure lost.
type Loss struct {
	Mode PowerFailMode `json:"mode"`
	// Files are the files that had unsynced writes, by path under the
	// mount point.
	Files []FileLoss `json:"files,omitempty"`
	// Entries are the directory entries undone.
	Entries []EntryLoss `json:"entries,omitempty"`
}

// FileLoss is what one file lost.
type FileLoss struct {
	Path string `json:"path"`
	// Synced is the file's size at its last sync (the last synced offset
	// of a file written by appending), Size its size at the failure.
	Synced int64 `json:"synced"`
	Size   int64 `json:"size"`
	// Unsynced counts the bytes written since the last sync, Lost those
	// a power failure took (all of them but a torn write's prefix), and
	// Writes the writes since the last sync.
	Unsynced int64 `json:"unsynced"`
	Lost     int64 `json:"lost"`
	Writes   int   `json:"writes"`
}

// EntryLoss is a directory entry a power failure undid.
type EntryLoss struct {
	Op   string `json:"op"` // create, unlink, rename, rmdir
	Path string `json:"path"`
	To   string `json:"to,omitempty"` // a rename's destination
}

// Bytes counts the bytes lost over every file.
func (l Loss) Bytes() int64 {
	var n int64
	for _, f := range l.Files {
		n += f.Lost
	}
	return n
}

// PowerFail is a power failure of the layer's disk: it unmounts the layer
// (the host's processes must be gone: a power failure kills them first)
// and undoes on the backing folder what was not synced, as mode says.
// The layer stays unmounted until Mount.
func (l *Layer) PowerFail(mode PowerFailMode) (Loss, error) {
	if mode != LoseUnsynced && mode != Torn {
		return Loss{}, fmt.Errorf("power failure mode %q: want %q or %q", mode, LoseUnsynced, Torn)
	}
	if err := l.Unmount(); err != nil {
		return Loss{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	loss := Loss{Mode: mode}
	t := &tree{root: l.backing, trash: l.trash}
	rel := func(p string) string {
		if r, err := filepath.Rel(l.backing, p); err == nil && !filepath.IsAbs(r) && r != ".." && !startsDotDot(r) {
			return filepath.ToSlash(r)
		}
		return "(unlinked) " + filepath.Base(p)
	}
	// What each file keeps of its unsynced writes: everything before
	// cut bytes of them (0 for lose-unsynced).
	keep := map[*entry]int64{}
	inos := make([]uint64, 0, len(l.j.data))
	for ino := range l.j.data {
		inos = append(inos, ino)
	}
	slices.Sort(inos) // the random cuts are drawn in one order, for replay
	for _, ino := range inos {
		es := l.j.data[ino]
		fl := FileLoss{Synced: es[0].oldSize, Writes: len(es)}
		if p, ok := t.path(ino); ok {
			fl.Path = rel(p)
			if st, err := os.Stat(p); err == nil {
				fl.Size = st.Size()
			}
		}
		for _, e := range es {
			fl.Unsynced += e.n
		}
		var cut int64
		if mode == Torn && fl.Unsynced > 0 {
			cut = l.rng.Int64N(fl.Unsynced + 1)
		}
		var kept int64
		for _, e := range es {
			if e.op == opTrunc {
				if cut > 0 { // every write before it kept whole
					keep[e] = 1
				}
				continue
			}
			k := min(max(cut, 0), e.n)
			if 0 < k && k < e.n {
				// The write the cut falls in keeps only the sectors it
				// filled before it: a disk writes a sector whole or not
				// at all.
				k = max(0, (e.off+k)/Sector*Sector-e.off)
			}
			keep[e] = k
			kept += k
			cut -= e.n
		}
		fl.Lost = fl.Unsynced - kept
		loss.Files = append(loss.Files, fl)
	}
	var first error
	for _, e := range l.j.pending() {
		switch e.op {
		case opWrite, opTrunc:
			k := keep[e]
			if e.op == opWrite && k == e.n && e.n > 0 || e.op == opTrunc && k > 0 {
				continue // kept whole
			}
			if p, ok := t.path(e.ino); ok {
				if err := undoData(p, e, k); err != nil && first == nil {
					first = err
				}
			}
		default:
			el := EntryLoss{Op: opName(e.op)}
			if d, ok := t.path(e.dir); ok {
				el.Path = rel(filepath.Join(d, e.name))
			}
			if e.op == opRename {
				if d, ok := t.path(e.toDir); ok {
					el.To = rel(filepath.Join(d, e.toName))
				}
			}
			if err := undoName(t, e); err != nil && first == nil {
				first = err
			}
			loss.Entries = append(loss.Entries, el)
		}
	}
	slices.SortFunc(loss.Files, func(a, b FileLoss) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	l.j = newJournal()
	l.emptyTrash()
	return loss, first
}

func startsDotDot(r string) bool { return len(r) >= 3 && r[:3] == "../" }

func opName(o op) string {
	switch o {
	case opCreate:
		return "create"
	case opUnlink:
		return "unlink"
	case opRename:
		return "rename"
	case opRmdir:
		return "rmdir"
	}
	return "write"
}

// Close unmounts the layer (lazily where it must) and forgets its
// journal; the backing folder stays as it is.
func (l *Layer) Close() error {
	err := l.Unmount()
	l.mu.Lock()
	l.j = newJournal()
	l.mu.Unlock()
	return err
}

// Durable makes the file at rel (a path under the mount point) durable as
// it is now, with the names that lead to it: a file written before a
// host's processes start, as a machine's provisioning would have synced
// it. The other entries of its directories stay as they were.
func (l *Layer) Durable(rel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.backing
	parent, ok := inoOf(p)
	if !ok {
		return
	}
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		p = filepath.Join(p, part)
		ino, ok := inoOf(p)
		if !ok {
			return
		}
		for _, e := range l.j.names[parent] {
			if e.op == opCreate && e.ino == ino {
				e.synced = true
			}
		}
		parent = ino
	}
	l.j.syncFile(parent)
}

// Wipe empties the disk, as a replaced machine's new disk: it unmounts
// the layer, removes every file of the backing folder and forgets the
// journal. The next Mount shows an empty folder.
func (l *Layer) Wipe() error {
	if err := l.Unmount(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.j = newJournal()
	l.emptyTrash()
	ents, err := os.ReadDir(l.backing)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(l.backing, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
