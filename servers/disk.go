package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/storage"
	"github.com/coupharness/coup/nemesis"
	"github.com/coupharness/coup/scenario"
)

// A node's disk. When the scenario asks for coup's storage layer
// (scenario.StorageLayer: [server] disk = "fuse", or a power failure or a
// disk fault among its faults), each node's data folder ({{.Data}}) is a
// mount of the layer, whose files live in the node's disk folder beside
// it (n1/disk, in the run's store). The mount is made before the host's
// processes start (server.start, each start: a power failure unmounts
// it), the files the host writes there before its processes start (a
// ZooKeeper myid) are made durable as a machine's provisioning would, and
// every mount is gone at the run's end (shutdown), whatever happened.

// diskFolder is where a node's files live under the layer.
func diskFolder(node *scenario.ServerNode) string { return filepath.Join(node.Dir, "disk") }

// checkDisks refuses, before anything starts, a run that needs the
// storage layer where FUSE cannot be had, with the reason; and unmounts
// what earlier runs of coup that were killed left mounted in the store.
func (r *run) checkDisks() error {
	if swept, err := storage.Sweep(r.opts.Store); len(swept) > 0 || err != nil {
		r.progress("storage layer: unmounted %d mounts an earlier run left in %s: %s (%v)", len(swept), r.opts.Store, strings.Join(swept, ", "), err)
	}
	if !r.sc.StorageLayer() {
		return nil
	}
	if err := storage.Available(); err != nil {
		return fmt.Errorf("the data folders go through coup's storage layer (a power failure or a disk fault needs it), and it cannot be had here: %w", err)
	}
	return nil
}

// newDisk is a node's storage layer, or nil when the scenario keeps the
// data folders plain. Each node's layer draws its random choices from the
// scenario's seed and the node's place, so that a run replays them.
func (r *run) newDisk(node *scenario.ServerNode, i int) (*storage.Layer, error) {
	if !r.sc.StorageLayer() {
		return nil, nil
	}
	l, err := storage.New(diskFolder(node), node.Data, r.sc.Seed*1000+int64(i))
	if err == nil && r.sv.DiskNames == scenario.DiskNamesPOSIX {
		l.SetNames(storage.POSIX)
	}
	return l, err
}

// mountDisk mounts the node's data folder through its layer, where it
// has one, before its host's processes start.
func (s *server) mountDisk() error {
	if s.disk == nil {
		return nil
	}
	if err := s.disk.Mount(); err != nil {
		return fmt.Errorf("%s: %w", s.id, err)
	}
	return nil
}

// written makes the files the host wrote into its data folder before its
// processes started durable.
func (s *server) written(paths []string) {
	if s.disk == nil {
		return
	}
	for _, p := range paths {
		if rel, err := filepath.Rel(s.data.Data, p); err == nil && !strings.HasPrefix(rel, "..") {
			s.disk.Durable(rel)
		}
	}
}

// wipeDisk empties a replaced node's disk: unmounted, its files gone, its
// journal forgotten; the next start mounts it again, empty.
func (s *server) wipeDisk() error {
	if s.disk == nil {
		return nil
	}
	return s.disk.Wipe()
}

// closeDisks unmounts every node's layer, lazily where something still
// holds it.
func (r *run) closeDisks() {
	for _, s := range r.servers {
		if s.disk != nil {
			if err := s.disk.Close(); err != nil {
				r.progress("%s: storage layer: %v", s.id, err)
			}
		}
	}
}

// PowerFail is a power failure of nodes' hosts (nemesis.PowerFailer):
// every process of each host is killed, all hosts at once, and then each
// disk loses what was not synced; the hosts stay down until restarted.
func (r *run) PowerFail(nodes []string, mode nemesis.PowerFail, fault string) error {
	var ss []*server
	for _, n := range nodes {
		s, err := r.server(n)
		if err != nil {
			return err
		}
		if s.disk == nil {
			return fmt.Errorf("%s: its data folder is not on coup's storage layer", n)
		}
		ss = append(ss, s)
	}
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() { defer wg.Done(); s.end(history.ProcCrash) }()
	}
	wg.Wait()
	var errs []error
	for _, s := range ss {
		loss, err := s.disk.PowerFail(storage.PowerFailMode(mode))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.id, err))
		}
		r.recordLoss(s.id, fault, loss)
	}
	return errors.Join(errs...)
}

// recordLoss records what a node's power failure lost.
func (r *run) recordLoss(node, fault string, loss storage.Loss) {
	r.disks.add(history.CountDiskLostBytes, loss.Bytes())
	for _, f := range loss.Files {
		if f.Lost > 0 {
			r.disks.add(history.CountDiskLostFiles, 1)
		}
	}
	detail := LossLine(loss)
	r.progress("%s: power failure (%s): %s", node, loss.Mode, detail)
	v, _ := json.Marshal(loss)
	r.Record(history.Event{Kind: history.KindDisk, Node: node, Name: fault, What: history.DiskLost, Detail: detail, Value: string(v)})
}

// LossLine says in one line what a power failure lost.
func LossLine(loss storage.Loss) string {
	var parts []string
	for _, f := range loss.Files {
		parts = append(parts, fmt.Sprintf("%s: %d of %d unsynced bytes lost, synced to offset %d", f.Path, f.Lost, f.Unsynced, f.Synced))
	}
	for _, e := range loss.Entries {
		s := e.Op + " " + e.Path
		if e.To != "" {
			s += " → " + e.To
		}
		parts = append(parts, s+" undone")
	}
	if len(parts) == 0 {
		return "nothing: every write had been synced"
	}
	return strings.Join(parts, "; ")
}

// Disk starts or ends a disk fault on a node's disk (nemesis.Disker).
func (r *run) Disk(node string, d nemesis.DiskFault, start bool) error {
	s, err := r.server(node)
	if err != nil {
		return err
	}
	if s.disk == nil {
		return fmt.Errorf("%s: its data folder is not on coup's storage layer", node)
	}
	switch d.Mode {
	case nemesis.DiskCorrupt:
		c, err := s.disk.Corrupt(storage.CorruptSpec{Files: d.Files, Bits: d.Bits, Zero: d.Zero, Truncate: d.Truncate})
		if err != nil {
			return err
		}
		r.disks.add(history.CountDiskFlips, int64(len(c.Flips)))
		detail := CorruptionLine(c)
		r.progress("%s: disk corrupted: %s", node, detail)
		v, _ := json.Marshal(c)
		r.Record(history.Event{Kind: history.KindDisk, Node: node, Name: d.Fault, What: history.DiskCorrupted, Detail: detail, Value: string(v)})
	case nemesis.DiskFull:
		s.disk.SetFull(start)
	case nemesis.DiskSlow:
		if start {
			s.disk.SetSlow(d.Delay)
		} else {
			s.disk.SetSlow(0)
		}
	case nemesis.DiskEIO:
		s.disk.SetEIO(d.Files, start && d.Ops != "write", start && d.Ops != "read")
	}
	return nil
}

// CorruptionLine says in one line what a corruption did.
func CorruptionLine(c storage.Corruption) string {
	var parts []string
	for _, f := range c.Flips {
		parts = append(parts, fmt.Sprintf("%s: bit %d of byte %d flipped", f.Path, f.Bit, f.Offset))
	}
	for _, z := range c.Zeroed {
		parts = append(parts, fmt.Sprintf("%s: %d bytes zeroed at %d", z.Path, z.Length, z.Offset))
	}
	for _, z := range c.Cut {
		parts = append(parts, fmt.Sprintf("%s: cut to %d bytes (%d off)", z.Path, z.Offset, z.Length))
	}
	if len(parts) == 0 {
		return "nothing: " + c.Missing
	}
	return strings.Join(parts, "; ")
}

// diskCounts are the run's counts of what storage faults did, for the
// end event.
type diskCounts struct {
	mu sync.Mutex
	m  map[string]int64
}

func (d *diskCounts) add(key string, n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]int64{}
	}
	d.m[key] += n
}

// into adds the counts to the end event's, each present (0 too) when the
// run had a storage fault.
func (d *diskCounts) into(counts map[string]int64, any bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !any {
		return
	}
	for _, k := range []string{history.CountDiskLostBytes, history.CountDiskLostFiles, history.CountDiskFlips} {
		counts[k] += d.m[k]
	}
}

var (
	_ nemesis.PowerFailer = (*run)(nil)
	_ nemesis.Disker      = (*run)(nil)
)
