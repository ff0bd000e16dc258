package coup

import (
	"io/fs"
	"slices"
	"sync"

	"github.com/coupharness/coup/sim"
)

// Storage is a node's disk, for what a Machine must keep across its
// crashes and restarts (a Raft node's term and vote): named files, each
// written whole, durable once synced. Under the simulator it outlives the
// node's incarnations, and a power failure (a crash with disk =
// "lose-unsynced" or "torn") loses every write not synced since, as a
// real disk does; a disk fault makes it full (Write fails with
// ErrNoSpace), failing (ErrIO) or corrupts its files, replayed by the
// seed. It is sim.Storage.
type Storage = sim.Storage

// The storage errors: a full disk, and an I/O error.
var (
	ErrNoSpace = sim.ErrNoSpace
	ErrIO      = sim.ErrIO
)

// StorageOf is the node's Storage. Under the simulator it is the node's
// simulated disk; in a node process of its own (Serve) it is kept in
// memory, and so lost with the process, as everything of a restarted node
// process is.
func StorageOf(env Env) Storage {
	if s, ok := env.(interface{ Storage() sim.Storage }); ok {
		return s.Storage()
	}
	memMu.Lock()
	defer memMu.Unlock()
	m := memDisks[env.Self()]
	if m == nil {
		m = &memStorage{files: map[string][]byte{}}
		memDisks[env.Self()] = m
	}
	return m
}

var (
	memMu    sync.Mutex
	memDisks = map[string]*memStorage{}
)

// memStorage is a node process's Storage: files in memory, every write
// durable while the process lives.
type memStorage struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (m *memStorage) Write(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[name] = slices.Clone(data)
	return nil
}

func (m *memStorage) Sync(string) error { return nil }

func (m *memStorage) Read(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return slices.Clone(b), nil
}
