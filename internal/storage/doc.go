// Package storage is coup's storage layer: a FUSE loopback file system
// that keeps a host's files in a real folder (the backing folder, in the
// run's store) and shows them at another (the mount point, the host's data
// folder), and that knows, for every file and directory, what has been
// synced. It knows files and syncs, not servers: the real-server driver
// mounts a host's data folder through a Layer and calls its faults.
//
// What counts as a sync:
//   - fsync and fdatasync of a file: its data and size (and no other
//     file's data);
//   - a write through a file opened O_SYNC or O_DSYNC: that file, as if
//     fsync followed each write;
//   - for directory entries (creates, unlinks, renames, mkdirs, rmdirs),
//     one of two models (Names): Journal, the default, where any sync
//     makes every entry made before it durable, as the journal of ext4 or
//     XFS commits every directory's changes at an fsync; or POSIX, where
//     only a directory's own fsync makes its entries durable (a rename is
//     the source's and the destination's: either one's sync), and a
//     file's fsync the name that created it.
//
// sync_file_range never reaches a FUSE file system (the kernel has no
// FUSE request for it) and promises no durability anyway: a write it
// flushed is lost like any other unsynced write. syncfs and sync(2) reach
// FUSE as nothing either.
//
// The layer writes through: every write reaches the backing file at once,
// and what it overwrote (the old bytes, the old size) is kept in an undo
// journal until the file is synced. An unlinked file, or one a rename
// replaced, goes to a trash folder beside the backing folder until its
// directory is synced. A power failure (PowerFail) is the journal played
// backwards on the backing folder while nothing is mounted: every write
// not synced is undone (lose-unsynced), or each file keeps a random,
// seeded prefix of its unsynced writes, in the order they were made, the
// last one kept torn at a random sector boundary (torn: a disk writes a
// 512-byte sector whole or not at all); then every directory entry
// not synced is undone. What a fault lost, or flipped, is returned as a
// record (Loss, Corruption) for the history.
//
// Disk faults act while the layer is mounted: Full (writes fail with
// ENOSPC), Slow (each write and each sync waits), EIO (reads or writes of
// matching files fail), and Corrupt (bits flipped, a range zeroed, or a
// file truncated, in the backing files, with the kernel's cached pages of
// them dropped).
//
// What it cannot model: the page cache's own write-back order (every write
// is ordered as the program made it, and synced writes are never
// reordered); a write torn below the size the program wrote (torn keeps
// whole writes but the last); memory-mapped writes (msync reaches FUSE
// as an fsync, but a store through a shared mapping reaches the layer only
// when the kernel writes the page back, which it may do at any time or not
// before the unmount); the kernel's cached pages of a file read before a
// Corrupt or EIO began are dropped, but a program that mapped the file
// keeps its mapping's pages; a rename of a directory is undone, but the
// entries inside it are kept as they were.
//
// A Layer serves its mount from this process; a process killed with
// SIGKILL leaves its mounts behind ("transport endpoint is not
// connected"), and Sweep, at a later run's start, unmounts every mount of
// this layer under a folder. As root the layer mounts by itself (mount(2));
// as a user who is not root it needs fusermount3 and a /dev/fuse it may
// open, and Available says why, before anything starts, where it cannot
// be had.
package storage
