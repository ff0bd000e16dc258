package servers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/internal/storage"
	"github.com/coupharness/coup/scenario"
)

// diskScenario is a peer scenario whose servers each write A to their
// data folder, sync it, append B without a sync, and serve; rest is
// appended (the faults).
func diskScenario(t *testing.T, rest string) *scenario.Scenario {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`nodes = 3
duration = "1s"
recovery = "500ms"

[server]
command = ["sh", "-c", "if [ ! -e {{.Data}}/log ]; then printf A > {{.Data}}/log && sync {{.Data}}/log && printf B >> {{.Data}}/log; fi; exec %s {{.ID}} {{.Addr.peer}} n1%s"]
env = { COUP_TEST_PEER = "1" }
ports = ["peer"]
peer = ["peer"]
start_timeout = "10s"

[[server.log]]
match = '(?P<self>n[0-9]) leads at term (?P<term>[0-9]+)'
role = "leader"

[[server.log]]
match = 'follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

[checks]
run = ["two-leaders"]

%s`, exe, `{{range .Nodes}}{{if ne .ID $.ID}} {{(index $.Reach .ID).Addr.peer}}{{end}}{{end}}`, rest)
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "disk.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func fuseForRuns(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		needs.Skip(t, "fuse3", "/dev/fuse is missing (the kernel's fuse module)")
	}
	if _, err := exec.LookPath("sync"); err != nil { // coreutils, essential on Debian
		t.Skip("no sync(1) for the servers to sync their file with")
	}
	if err := storage.Available(); err != nil {
		t.Skipf("no FUSE for this user: %v", err)
	}
}

// A power failure of n1's host loses the B its server never synced, and
// keeps the A it did; n2, whose host kept its power, keeps both; the
// history says what was lost, and nothing stays mounted.
func TestPowerFailureOfAHost(t *testing.T) {
	fuseForRuns(t)
	sc := diskScenario(t, `[[faults]]
kind = "crash"
disk = "lose-unsynced"
target = "n1"
at = "300ms"
`)
	store := t.TempDir()
	_, dir, err := Run(context.Background(), sc, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if mps, _ := storage.Mounts(store); len(mps) > 0 {
		t.Fatalf("still mounted after the run: %v", mps)
	}
	for node, want := range map[string]string{"n1": "A", "n2": "AB"} {
		got, err := os.ReadFile(filepath.Join(dir, node, "disk", "log"))
		if err != nil || string(got) != want {
			t.Errorf("%s's log holds %q (%v), want %q", node, got, err, want)
		}
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lost []history.Event
	for _, e := range h.Events {
		if e.Kind == history.KindDisk {
			lost = append(lost, e)
		}
	}
	if len(lost) != 1 || lost[0].Node != "n1" || lost[0].What != history.DiskLost || lost[0].Name != "faults[0]#1" {
		t.Fatalf("disk events %+v, want one loss on n1", lost)
	}
	var loss storage.Loss
	if err := json.Unmarshal([]byte(lost[0].Value), &loss); err != nil {
		t.Fatal(err)
	}
	if loss.Bytes() != 1 || len(loss.Files) != 1 || loss.Files[0].Synced != 1 {
		t.Errorf("loss %+v, want 1 byte of log lost past the synced offset 1", loss)
	}
	if !strings.Contains(lost[0].Detail, "log: 1 of 1 unsynced bytes lost, synced to offset 1") {
		t.Errorf("detail %q", lost[0].Detail)
	}
	end := h.Events[len(h.Events)-1]
	if end.Counts[history.CountDiskLostBytes] != 1 || end.Counts[history.CountDiskLostFiles] != 1 {
		t.Errorf("end counts %v", end.Counts)
	}
}

// A corruption flips the bits it records in the matching files (a full
// disk, meanwhile, starts and ends on another host: its writes' ENOSPC is
// internal/storage's test); the run's end leaves nothing mounted.
func TestDiskFaultsOfAHost(t *testing.T) {
	fuseForRuns(t)
	sc := diskScenario(t, `[[faults]]
kind = "disk"
mode = "corrupt"
files = "log"
bits = 1
target = "n2"
at = "300ms"

[[faults]]
kind = "disk"
mode = "full"
target = "n3"
at = "300ms"
for = "200ms"
`)
	store := t.TempDir()
	_, dir, err := Run(context.Background(), sc, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if mps, _ := storage.Mounts(store); len(mps) > 0 {
		t.Fatalf("still mounted after the run: %v", mps)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var c storage.Corruption
	for _, e := range h.Events {
		if e.Kind == history.KindDisk && e.What == history.DiskCorrupted {
			json.Unmarshal([]byte(e.Value), &c)
		}
	}
	if len(c.Flips) != 1 {
		t.Fatalf("corruption %+v, want one flip", c)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "n2", "disk", "log"))
	want := []byte("AB")
	want[c.Flips[0].Offset] ^= 1 << c.Flips[0].Bit
	if string(got) != string(want) {
		t.Errorf("n2's log holds %q, want %q (AB with the recorded flip)", got, want)
	}
}

// Where FUSE cannot be had, a scenario that needs the layer is refused
// before anything starts, with the reason.
func TestStorageLayerRefusedWithTheReason(t *testing.T) {
	if storage.Available() == nil {
		t.Skip("FUSE can be had here: the refusal is TestRefusedWithoutFUSE's, as nobody, in internal/storage")
	}
	sc := diskScenario(t, "[[faults]]\nkind = \"crash\"\ndisk = \"torn\"\ntarget = \"n1\"\nat = \"300ms\"\n")
	_, _, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "storage layer") {
		t.Fatalf("run: %v, want a refusal naming the storage layer", err)
	}
}

// A file poll of a node whose data folder goes through the storage layer
// reads the layer's backing folder, never coup's own mount: here the
// layer is not even mounted, as during a power failure, and the poll
// still reads what the host wrote; a path outside the data folder is read
// as it is.
func TestFilePollReadsPastTheLayer(t *testing.T) {
	dir := t.TempDir()
	backing, data := filepath.Join(dir, "n1", "disk"), filepath.Join(dir, "n1", "data")
	l, err := storage.New(backing, data, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(backing, "version-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "version-2", "currentEpoch"), []byte("7"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "n1", "status")
	if err := os.WriteFile(outside, []byte("up"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &run{byID: map[string]*server{"n1": {id: "n1", disk: l}}}
	for p, want := range map[string]string{filepath.Join(data, "version-2", "currentEpoch"): "7", outside: "up"} {
		got, err := r.ask("n1", scenario.RenderedPoll{File: p}, "", time.Second)
		if err != nil || string(got) != want {
			t.Errorf("a poll of %s: %q, %v; want %q", p, got, err, want)
		}
	}
}
