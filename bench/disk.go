package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/coupharness/coup/internal/storage"
)

// PartDisk measures coup's storage layer: fsync latency and sequential
// write throughput through the layer's mount, against the same folder
// written directly (its backing folder), as ratios.
const PartDisk = "disk"

// The disk part's work, each way, each round (the ways taking turns).
const (
	diskRounds = 5
	// diskSyncs appends diskSyncSize bytes and fsyncs, that many times:
	// a write-ahead log's commit.
	diskSyncs    = 200
	diskSyncSize = 4096
	// diskSeqBytes are written in diskSeqChunk writes, then synced once:
	// a snapshot or a compaction.
	diskSeqBytes = 32 << 20
	diskSeqChunk = 128 << 10
)

// DiskCase is the disk part's figures: for each way (direct, through the
// layer), the median over rounds of each round's median fsync latency
// (an append and its fsync), of its 99th percentile, and of its
// sequential write throughput in bytes per second.
type DiskCase struct {
	Skipped    string
	Rounds     int
	SyncMedian [2]time.Duration
	SyncP99    [2]time.Duration
	SeqRate    [2]float64
}

// The disk part's ways.
const (
	DiskDirect = iota // the backing folder, written directly
	DiskLayer         // the same folder through the layer's mount
)

// runDiskPart measures both ways, taking turns, in a folder of dir.
func runDiskPart(ctx context.Context, dir string, progress func(string, ...any)) (*DiskCase, error) {
	c := &DiskCase{Rounds: diskRounds}
	if err := storage.Available(); err != nil {
		c.Skipped = err.Error()
		progress("disk: skipped: %v", err)
		return c, nil
	}
	work := filepath.Join(dir, "disk")
	l, err := storage.New(filepath.Join(work, "backing"), filepath.Join(work, "mount"), 1)
	if err != nil {
		return c, err
	}
	if err := l.Mount(); err != nil {
		return c, err
	}
	defer l.Close()
	folders := [2]string{l.Backing(), l.Mountpoint()}
	var med, p99 [2][]int64
	var rate [2][]float64
	for round := range diskRounds {
		for way, folder := range folders {
			if ctx.Err() != nil {
				return c, ctx.Err()
			}
			sub := filepath.Join(folder, fmt.Sprintf("r%d", round))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return c, err
			}
			m, p, err := syncLatency(filepath.Join(sub, "log"))
			if err != nil {
				return c, fmt.Errorf("disk part, fsync latency: %w", err)
			}
			r, err := seqRate(filepath.Join(sub, "seq"))
			if err != nil {
				return c, fmt.Errorf("disk part, sequential writes: %w", err)
			}
			med[way] = append(med[way], int64(m))
			p99[way] = append(p99[way], int64(p))
			rate[way] = append(rate[way], r)
			os.RemoveAll(sub)
		}
		// What the journal kept of the round is forgotten, as a long run's
		// synced files are: every file of it was synced.
		l.Settle()
	}
	for way := range 2 {
		c.SyncMedian[way] = time.Duration(percentile(slices.Sorted(slices.Values(med[way])), 0.5))
		c.SyncP99[way] = time.Duration(percentile(slices.Sorted(slices.Values(p99[way])), 0.5))
		rs := slices.Sorted(slices.Values(rate[way]))
		c.SeqRate[way] = rs[len(rs)/2]
	}
	progress("disk: fsync %s direct, %s through the layer (%.2f×); sequential %.0f MB/s direct, %.0f MB/s through it (%.2f×)",
		c.SyncMedian[DiskDirect], c.SyncMedian[DiskLayer], c.SyncRatio(), c.SeqRate[DiskDirect]/1e6, c.SeqRate[DiskLayer]/1e6, c.SeqRatio())
	return c, nil
}

// SyncRatio is the layer's median fsync latency over the direct one.
func (c *DiskCase) SyncRatio() float64 {
	if c.SyncMedian[DiskDirect] <= 0 {
		return 0
	}
	return float64(c.SyncMedian[DiskLayer]) / float64(c.SyncMedian[DiskDirect])
}

// SeqRatio is the layer's sequential write throughput over the direct
// one (below 1: slower).
func (c *DiskCase) SeqRatio() float64 {
	if c.SeqRate[DiskDirect] <= 0 {
		return 0
	}
	return c.SeqRate[DiskLayer] / c.SeqRate[DiskDirect]
}

// syncLatency appends and fsyncs diskSyncs times, and returns the median
// and the 99th percentile of each append and its fsync.
func syncLatency(path string) (time.Duration, time.Duration, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, diskSyncSize)
	took := make([]int64, diskSyncs)
	for i := range took {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			return 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
		took[i] = int64(time.Since(start))
	}
	slices.Sort(took)
	return time.Duration(percentile(took, 0.5)), time.Duration(percentile(took, 0.99)), nil
}

// seqRate writes diskSeqBytes in chunks and syncs once, and returns the
// bytes per second.
func seqRate(path string) (float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, diskSeqChunk)
	start := time.Now()
	for n := 0; n < diskSeqBytes; n += len(buf) {
		if _, err := f.Write(buf); err != nil {
			return 0, err
		}
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return float64(diskSeqBytes) / time.Since(start).Seconds(), nil
}

func (r *Results) printDisk(w io.Writer) {
	c := r.Disk
	fmt.Fprintf(w, "\ncoup's storage layer (FUSE) against the same folder directly, %d rounds, medians:\n", c.Rounds)
	if c.Skipped != "" {
		fmt.Fprintf(w, "  skipped: %s\n", c.Skipped)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tdirect\tthrough the layer\tratio\t\n")
	fmt.Fprintf(tw, "append %d B + fsync, median\t%s\t%s\t%.2f×\t\n", diskSyncSize, c.SyncMedian[DiskDirect].Round(time.Microsecond), c.SyncMedian[DiskLayer].Round(time.Microsecond), c.SyncRatio())
	fmt.Fprintf(tw, "append %d B + fsync, p99\t%s\t%s\t%.2f×\t\n", diskSyncSize, c.SyncP99[DiskDirect].Round(time.Microsecond), c.SyncP99[DiskLayer].Round(time.Microsecond), float64(c.SyncP99[DiskLayer])/float64(max(c.SyncP99[DiskDirect], 1)))
	fmt.Fprintf(tw, "sequential write %d MB (%d KB writes) + fsync\t%.0f MB/s\t%.0f MB/s\t%.2f×\t\n", diskSeqBytes>>20, diskSeqChunk>>10, c.SeqRate[DiskDirect]/1e6, c.SeqRate[DiskLayer]/1e6, c.SeqRatio())
	tw.Flush()
}
