package storage

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a file or directory of the layer: go-fuse's loopback node, with
// every operation that changes the disk recorded in the journal first,
// and every sync made durable there.
type node struct {
	fs.LoopbackNode
	l *Layer
}

var (
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeReader         = (*node)(nil)
	_ fs.NodeWriter         = (*node)(nil)
	_ fs.NodeWritever       = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeAllocater      = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
)

// full is the node's path in the backing folder.
func (n *node) full() string {
	return filepath.Join(n.RootData.Path, n.Path(nil))
}

// rel is the node's path under the mount point, as a fault's files glob
// sees it.
func (n *node) rel() string { return n.Path(nil) }

// ino is the node's inode number in the backing folder (the root's is
// FUSE's own, 1, so it is read from the backing folder).
func (n *node) ino() uint64 {
	if n.EmbeddedInode() == n.Root() {
		if ino, ok := inoOf(n.RootData.Path); ok {
			return ino
		}
	}
	return n.StableAttr().Ino
}

// child is the inode number of the name in this directory.
func (n *node) child(name string) (uint64, uint32, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(filepath.Join(n.full(), name), &st) != nil {
		return 0, 0, false
	}
	return st.Ino, st.Mode, true
}

// created records the create of name in this directory.
func (n *node) created(name string, ch *fs.Inode, isDir bool) {
	n.l.mu.Lock()
	n.l.j.addName(&entry{op: opCreate, dir: n.ino(), name: name, ino: ch.StableAttr().Ino, isDir: isDir})
	n.l.mu.Unlock()
}

// Create makes a file, records its name and opens it.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if n.l.isFull() {
		return nil, nil, 0, syscall.ENOSPC
	}
	ch, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return ch, fh, fuseFlags, errno
	}
	n.created(name, ch, false)
	lf := fh.(*fs.LoopbackFile)
	h, errno := newHandle(n.l, lf, filepath.Join(n.full(), name), ch.StableAttr().Ino, flags)
	if errno != 0 {
		lf.Release(ctx)
		return nil, nil, 0, errno
	}
	return ch, h, fuseFlags, 0
}

// Open opens the file; an O_TRUNC open records the truncation first.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	flags &^= syscall.O_APPEND | fuse.FMODE_EXEC
	p := n.full()
	if flags&syscall.O_TRUNC != 0 && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		if errno := n.l.recordTrunc(p, n.ino(), 0); errno != 0 {
			return nil, 0, errno
		}
	}
	f, err := os.OpenFile(p, int(flags), 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	h, errno := newHandle(n.l, fs.NewLoopbackFileFromOS(f), p, n.ino(), flags)
	if errno != 0 {
		f.Close()
		return nil, 0, errno
	}
	return h, 0, 0
}

// OpendirHandle opens a directory whose fsync reaches Fsync.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return ds, fuseFlags, errno
	}
	return &dirHandle{ds: ds}, fuseFlags, 0
}

// Read reads through the file's handle, unless an EIO fault covers it.
func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := f.(*handle)
	if !ok {
		return nil, syscall.EBADF
	}
	if n.l.failsEIO(n.rel(), false) {
		return nil, syscall.EIO
	}
	return h.lf.Read(ctx, dest, off)
}

// Write writes through, recording what it overwrote.
func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	h, ok := f.(*handle)
	if !ok {
		return 0, syscall.EBADF
	}
	if n.l.failsEIO(n.rel(), true) {
		return 0, syscall.EIO
	}
	return n.l.write(h, data, off)
}

// Writev is Write of the pieces joined.
func (n *node) Writev(ctx context.Context, f fs.FileHandle, data [][]byte, off int64) (uint32, syscall.Errno) {
	var all []byte
	for _, d := range data {
		all = append(all, d...)
	}
	return n.Write(ctx, f, all, off)
}

// Fsync is fsync or fdatasync of a file (flags 1), or the sync of a
// directory: the journal makes durable what it covers.
//
// The backing file (or folder) is synced too, so that a sync through the
// layer costs what the disk's own costs, and a program's timing under it
// stays its own.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	n.l.wait()
	if n.IsDir() {
		if fd, err := syscall.Open(n.full(), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err == nil {
			syscall.Fsync(fd)
			syscall.Close(fd)
		}
		n.l.syncDir(n.ino())
		return 0
	}
	if h, ok := f.(*handle); ok {
		var err error
		if flags&1 != 0 {
			err = syscall.Fdatasync(h.fd)
		} else {
			err = syscall.Fsync(h.fd)
		}
		if err != nil {
			return fs.ToErrno(err)
		}
	}
	n.l.syncFile(n.ino())
	return 0
}

// Setattr records a change of size before it is made.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if sz, ok := in.GetSize(); ok {
		if errno := n.l.recordTrunc(n.full(), n.ino(), int64(sz)); errno != 0 {
			return errno
		}
	}
	if h, ok := f.(*handle); ok {
		f = h.lf
	}
	return n.LoopbackNode.Setattr(ctx, f, in, out)
}

// Getattr reads the attributes through the file's handle where there is
// one.
func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := f.(*handle); ok {
		f = h.lf
	}
	return n.LoopbackNode.Getattr(ctx, f, out)
}

// Allocate records the range as a write of zeroes (or of what it keeps)
// before it is allocated.
func (n *node) Allocate(ctx context.Context, f fs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	h, ok := f.(*handle)
	if !ok {
		return syscall.EBADF
	}
	if n.l.isFull() {
		return syscall.ENOSPC
	}
	return n.l.allocate(h, int64(off), int64(size), mode)
}

// CopyFileRange is refused, so that the kernel copies through Read and
// Write, which the journal sees.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle,
	offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// Mkdir makes a directory and records its name.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.l.isFull() {
		return nil, syscall.ENOSPC
	}
	ch, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.created(name, ch, true)
	}
	return ch, errno
}

// Mknod makes a node and records its name.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
	if errno == 0 {
		n.created(name, ch, false)
	}
	return ch, errno
}

// Symlink makes a symbolic link and records its name.
func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	if errno == 0 {
		n.created(name, ch, false)
	}
	return ch, errno
}

// Link makes a hard link and records its name (undone, the name goes; the
// file stays under its other names).
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	ch, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.l.mu.Lock()
		n.l.j.addName(&entry{op: opCreate, dir: n.ino(), name: name, ino: ch.StableAttr().Ino, link: true})
		n.l.mu.Unlock()
	}
	return ch, errno
}

// Rmdir removes an empty directory and records it.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	ino, mode, ok := n.child(name)
	errno := n.LoopbackNode.Rmdir(ctx, name)
	if errno == 0 && ok {
		n.l.mu.Lock()
		n.l.j.addName(&entry{op: opRmdir, dir: n.ino(), name: name, ino: ino, mode: mode, isDir: true})
		n.l.mu.Unlock()
	}
	return errno
}

// Unlink moves the file to the trash, where it waits for the directory's
// sync.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	p := filepath.Join(n.full(), name)
	ino, _, ok := n.child(name)
	if !ok {
		return syscall.ENOENT
	}
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	trash := n.l.trashPath()
	if err := os.Rename(p, trash); err != nil {
		return fs.ToErrno(err)
	}
	n.l.j.addName(&entry{op: opUnlink, dir: n.ino(), name: name, ino: ino, trash: trash})
	return 0
}

// Rename moves a name; a file it replaces is kept in the trash (by a hard
// link, so that the rename stays atomic) until a directory's sync.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	ino, _, ok := n.child(name)
	if !ok {
		return syscall.ENOENT
	}
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	e := &entry{op: opRename, dir: n.ino(), name: name, toDir: np.ino(), toName: newName, ino: ino}
	if old, mode, ok := np.child(newName); ok && old != ino && mode&syscall.S_IFMT == syscall.S_IFREG && flags == 0 {
		trash := n.l.trashPath()
		if err := os.Link(filepath.Join(np.full(), newName), trash); err == nil {
			e.trash = trash
		}
	}
	errno := n.LoopbackNode.Rename(ctx, name, &np.LoopbackNode, newName, flags)
	if errno != 0 {
		if e.trash != "" {
			os.Remove(e.trash)
		}
		return errno
	}
	n.l.j.addName(e)
	return 0
}

// Statfs says the disk has no room while a full fault lasts.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	errno := n.LoopbackNode.Statfs(ctx, out)
	if errno == 0 && n.l.isFull() {
		out.Bfree, out.Bavail = 0, 0
	}
	return errno
}
