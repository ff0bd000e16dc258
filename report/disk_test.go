package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// The storage faults' disk events are listed, a line each, and what they
// say is escaped; a run with none has no such section.
func TestReportListsStorageFaults(t *testing.T) {
	page := func(extra ...history.Event) string {
		h := reportHistory(extra...)
		res, err := verdict.Evaluate(h)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, res, h); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	p := page(history.Event{Time: 250e6, Kind: history.KindDisk, Node: "n2", Name: "faults[0]#1", What: history.DiskLost,
		Detail: "wal/0.wal: 4400 of 4400 unsynced bytes lost, synced to offset 3000; create <x> undone"})
	for _, want := range []string{`<h2 id="disk">Storage faults</h2>`, "<td>0.250s</td><td>n2</td><td>faults[0]#1</td><td>lost</td>",
		"synced to offset 3000; create &lt;x&gt; undone"} {
		if !strings.Contains(p, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(page(), `id="disk"`) {
		t.Error("a run with no storage fault has a storage section")
	}
}

// results.json's stats say what each storage fault did, a line each.
func TestResultsListStorageFaults(t *testing.T) {
	h := reportHistory(history.Event{Time: 250e6, Kind: history.KindDisk, Node: "n2", Name: "faults[0]#1", What: history.DiskCorrupted,
		Detail: "log: bit 3 of byte 0 flipped"})
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	want := "0.250s n2 faults[0]#1 corrupted: log: bit 3 of byte 0 flipped"
	if len(res.Stats.Disk) != 1 || res.Stats.Disk[0] != want {
		t.Errorf("stats.disk %q, want [%q]", res.Stats.Disk, want)
	}
}
