package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/internal/storage"
)

// The disk part measures both ways and prints their ratios, and leaves
// nothing mounted.
func TestDiskPartRuns(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		needs.Skip(t, "fuse3", "/dev/fuse is missing (the kernel's fuse module)")
	}
	if err := storage.Available(); err != nil {
		t.Skipf("no FUSE for this user: %v", err)
	}
	dir := t.TempDir()
	c, err := runDiskPart(context.Background(), dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for way := range 2 {
		if c.SyncMedian[way] <= 0 || c.SyncP99[way] < c.SyncMedian[way] || c.SeqRate[way] <= 0 {
			t.Errorf("way %d: median %s, p99 %s, %.0f B/s", way, c.SyncMedian[way], c.SyncP99[way], c.SeqRate[way])
		}
	}
	var b bytes.Buffer
	(&Results{Disk: c}).Print(&b)
	for _, want := range []string{"coup's storage layer (FUSE)", "append 4096 B + fsync, median", "sequential write 32 MB"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	if mps, _ := storage.Mounts(dir); len(mps) > 0 {
		t.Errorf("left mounted: %v", mps)
	}
}
