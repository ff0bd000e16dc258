package storage

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// handle is an open file of the layer. It wraps go-fuse's loopback file
// for what the journal need not see (locks, seeks, attributes, release),
// and hides its passthrough descriptor, so that the kernel never reads or
// writes the backing file behind the layer's back.
type handle struct {
	lf *fs.LoopbackFile
	// fd writes; rfd reads what a write overwrites (fd itself, unless the
	// file was opened write-only: then a descriptor of its own).
	fd, rfd int
	ino     uint64
	sync    bool // opened O_SYNC or O_DSYNC: each write is synced
}

var (
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
	_ fs.FileGetattrer = (*handle)(nil)
	_ fs.FileLseeker   = (*handle)(nil)
	_ fs.FileGetlker   = (*handle)(nil)
	_ fs.FileSetlker   = (*handle)(nil)
	_ fs.FileSetlkwer  = (*handle)(nil)
)

func newHandle(l *Layer, lf *fs.LoopbackFile, path string, ino uint64, flags uint32) (*handle, syscall.Errno) {
	// The loopback file keeps its descriptor to itself; a second one, of
	// the same open file, is the journal's for its reads of old bytes and
	// its writes.
	fd := -1
	errno := withFd(lf, func(f int) syscall.Errno {
		d, err := syscall.Dup(f)
		fd = d
		return fs.ToErrno(err)
	})
	if errno != 0 {
		return nil, errno
	}
	rfd := fd
	if flags&syscall.O_ACCMODE == syscall.O_WRONLY {
		// A write-only file cannot be read through its own descriptor:
		// the journal reads through /proc's link to the same file, which
		// follows it through renames.
		r, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", fd), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			syscall.Close(fd)
			return nil, fs.ToErrno(err)
		}
		rfd = r
	}
	return &handle{lf: lf, fd: fd, rfd: rfd, ino: ino, sync: flags&syscall.O_DSYNC != 0}, 0
}

// withFd runs fn with the loopback file's descriptor, through the only
// way go-fuse gives it out (its passthrough descriptor).
func withFd(lf *fs.LoopbackFile, fn func(fd int) syscall.Errno) syscall.Errno {
	fd, ok := lf.PassthroughFd()
	if !ok {
		return syscall.EBADF
	}
	return fn(fd)
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	if h.rfd != h.fd {
		syscall.Close(h.rfd)
	}
	syscall.Close(h.fd)
	return h.lf.Release(ctx)
}
func (h *handle) Flush(ctx context.Context) syscall.Errno { return h.lf.Flush(ctx) }
func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.lf.Getattr(ctx, out)
}
func (h *handle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return h.lf.Lseek(ctx, off, whence)
}
func (h *handle) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	return h.lf.Getlk(ctx, owner, lk, flags, out)
}
func (h *handle) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return h.lf.Setlk(ctx, owner, lk, flags)
}
func (h *handle) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return h.lf.Setlkw(ctx, owner, lk, flags)
}

// dirHandle is an open directory: go-fuse's loopback directory stream,
// without its own fsync, so that a directory's sync reaches node.Fsync.
type dirHandle struct {
	ds fs.FileHandle
}

var (
	_ fs.FileReaddirenter = (*dirHandle)(nil)
	_ fs.FileSeekdirer    = (*dirHandle)(nil)
	_ fs.FileReleasedirer = (*dirHandle)(nil)
)

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.ds.(fs.FileReaddirenter).Readdirent(ctx)
}
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.ds.(fs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}
func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.ds.(fs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}

// oldBytes reads what [off, off+n) of the file holds below its size.
func oldBytes(fd int, off, n, size int64) ([]byte, error) {
	end := min(off+n, size)
	if end <= off {
		return nil, nil
	}
	old := make([]byte, end-off)
	got, err := syscall.Pread(fd, old, off)
	if err != nil {
		return nil, err
	}
	return old[:got], nil
}

func fdSize(fd int) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// write writes data at off through the handle, after recording what it
// overwrites, and syncs it at once for an O_SYNC file.
func (l *Layer) write(h *handle, data []byte, off int64) (uint32, syscall.Errno) {
	if l.isFull() {
		return 0, syscall.ENOSPC
	}
	l.wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := fdSize(h.fd)
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	old, err := oldBytes(h.rfd, off, int64(len(data)), size)
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	n, err := syscall.Pwrite(h.fd, data, off)
	if n > 0 {
		if int64(n) < int64(len(old)) {
			old = old[:n]
		}
		l.j.addData(&entry{op: opWrite, ino: h.ino, off: off, n: int64(n), old: old, oldSize: size})
		l.counted.Writes++
	}
	if err != nil {
		return uint32(max(n, 0)), fs.ToErrno(err)
	}
	if h.sync {
		l.syncNamesLocked()
		l.j.syncFile(h.ino)
		l.counted.Syncs++
	}
	return uint32(n), 0
}

// allocate allocates (or punches, or zeroes) a range, recorded as a write
// of what it changes.
func (l *Layer) allocate(h *handle, off, n int64, mode uint32) syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := fdSize(h.fd)
	if err != nil {
		return fs.ToErrno(err)
	}
	old, err := oldBytes(h.rfd, off, n, size)
	if err != nil {
		return fs.ToErrno(err)
	}
	if err := syscall.Fallocate(h.fd, mode, off, n); err != nil {
		return fs.ToErrno(err)
	}
	newSize, _ := fdSize(h.fd)
	if newSize != size || len(old) > 0 && mode != 0 {
		l.j.addData(&entry{op: opWrite, ino: h.ino, off: off, n: n, old: old, oldSize: size})
	}
	return 0
}

// recordTrunc records that the file at path is about to be cut or grown
// to size.
func (l *Layer) recordTrunc(path string, ino uint64, size int64) syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return fs.ToErrno(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fs.ToErrno(err)
	}
	old := st.Size()
	if old == size {
		return 0
	}
	if size > old && l.full {
		return syscall.ENOSPC
	}
	e := &entry{op: opTrunc, ino: ino, oldSize: old}
	if size < old {
		e.old = make([]byte, old-size)
		if _, err := io.ReadFull(io.NewSectionReader(f, size, old-size), e.old); err != nil {
			return fs.ToErrno(err)
		}
	}
	l.j.addData(e)
	return 0
}

// syncFile is an fsync or fdatasync of a file: its data, and, as the
// names say, every namespace change so far (Journal) or the name that
// created it (POSIX).
func (l *Layer) syncFile(ino uint64) {
	l.mu.Lock()
	l.syncNamesLocked()
	l.j.syncFile(ino)
	l.counted.Syncs++
	l.mu.Unlock()
}

// syncDir is a directory's fsync: its own entries, and under Journal
// every other directory's too.
func (l *Layer) syncDir(ino uint64) {
	l.mu.Lock()
	l.syncNamesLocked()
	l.j.syncDir(ino)
	l.counted.DirSyncs++
	l.mu.Unlock()
}

func (l *Layer) syncNamesLocked() {
	if l.names == Journal {
		l.j.syncNames()
	}
}
