package storage

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coupharness/coup/internal/needs"
)

// The writer: a process of its own that writes A, syncs, writes B, says
// so, and waits for its end (the power failure's SIGKILL).
const envWriter = "COUP_STORAGE_WRITER"

var (
	partA = bytes.Repeat([]byte("A"), 3000)
	partB = []byte(strings.Repeat("B0123456789", 400))
)

// The mounter: a process of its own that mounts a layer and waits, to be
// killed with its mount left behind.
const envMounter = "COUP_STORAGE_MOUNTER"

func TestMain(m *testing.M) {
	if p := os.Getenv(envWriter); p != "" {
		writer(p)
		return
	}
	if dir := os.Getenv(envMounter); dir != "" {
		l, err := New(filepath.Join(dir, "backing"), filepath.Join(dir, "data"), 1)
		if err == nil {
			err = l.Mount()
		}
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("mounted\n")
		var b [1]byte
		os.Stdin.Read(b[:]) // until killed
		return
	}
	os.Exit(m.Run())
}

func writer(p string) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(partA)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		// Two writes, so that torn may keep the first whole and cut the
		// second.
		if _, err = f.Write(partB[:len(partB)/2]); err == nil {
			_, err = f.Write(partB[len(partB)/2:])
		}
	}
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("written\n")
	var b [1]byte
	os.Stdin.Read(b[:]) // until killed
}

// fuseOrSkip skips the test where this process cannot have FUSE, naming
// why; as a user who is not root where the machine refuses FUSE, the
// refusal itself is what TestRefusedWithoutFUSE checks.
func fuseOrSkip(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		needs.Skip(t, "fuse3", "/dev/fuse is missing (the kernel's fuse module)")
	}
	if os.Geteuid() != 0 {
		needs.Program(t, "fusermount3", "fuse3")
	}
	if err := Available(); err != nil {
		t.Skipf("no FUSE for this user: %v", err)
	}
}

// layer is a layer over a fresh backing folder, mounted, and unmounted at
// the test's end whatever happened.
func layer(t *testing.T, seed int64) *Layer {
	t.Helper()
	dir := t.TempDir()
	l, err := New(filepath.Join(dir, "backing"), filepath.Join(dir, "data"), seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Mount(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close()
		if mps, _ := Mounts(dir); len(mps) > 0 {
			t.Errorf("left mounted: %v", mps)
		}
	})
	return l
}

// runWriter starts the writer on the file in the layer and waits until it
// has written; it returns the process, to be killed.
func runWriter(t *testing.T, file string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envWriter+"="+file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = stdin // held open: the writer waits on it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "written\n" {
		t.Fatalf("writer said %q (%v)", line, err)
	}
	return cmd
}

// powerCycle runs the writer in a layer, kills it and, with a mode, fails
// the power; it mounts the layer again and returns the file's bytes and
// the loss.
func powerCycle(t *testing.T, mode PowerFailMode, seed int64) ([]byte, Loss) {
	t.Helper()
	l := layer(t, seed)
	file := filepath.Join(l.Mountpoint(), "wal", "log")
	if err := os.Mkdir(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	syncDir(t, l.Mountpoint()) // wal/ is durable; the log's name is by its fsync
	cmd := runWriter(t, file)
	cmd.Process.Kill()
	cmd.Wait()
	var loss Loss
	if mode != "" {
		var err error
		if loss, err = l.PowerFail(mode); err != nil {
			t.Fatal(err)
		}
	} else if err := l.Unmount(); err != nil {
		t.Fatal(err)
	}
	if l.Mounted() {
		t.Fatal("mounted after the power failure")
	}
	if err := l.Mount(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	return got, loss
}

func TestPowerFailureLosesWhatWasNotSynced(t *testing.T) {
	fuseOrSkip(t)
	got, loss := powerCycle(t, LoseUnsynced, 1)
	if !bytes.Equal(got, partA) {
		t.Fatalf("after lose-unsynced the file holds %d bytes (%.20q…), want A only (%d bytes)", len(got), got, len(partA))
	}
	if len(loss.Files) != 1 {
		t.Fatalf("loss names %d files, want 1: %+v", len(loss.Files), loss)
	}
	f := loss.Files[0]
	want := FileLoss{Path: "wal/log", Synced: int64(len(partA)), Size: int64(len(partA) + len(partB)),
		Unsynced: int64(len(partB)), Lost: int64(len(partB)), Writes: f.Writes}
	if f != want || f.Writes < 2 {
		t.Errorf("loss %+v, want %+v", f, want)
	}
}

func TestNoFaultKeepsEverything(t *testing.T) {
	fuseOrSkip(t)
	got, _ := powerCycle(t, "", 1)
	if want := append(append([]byte{}, partA...), partB...); !bytes.Equal(got, want) {
		t.Fatalf("with no fault the file holds %d bytes, want A and B (%d)", len(got), len(want))
	}
}

func TestTornKeepsAPrefixOfTheUnsyncedWrites(t *testing.T) {
	fuseOrSkip(t)
	cuts := map[int]bool{}
	for seed := int64(1); seed <= 4; seed++ {
		got, loss := powerCycle(t, Torn, seed)
		if !bytes.HasPrefix(got, partA) {
			t.Fatalf("seed %d: torn lost synced bytes: %d bytes, want A first", seed, len(got))
		}
		kept := got[len(partA):]
		if !bytes.HasPrefix(partB, kept) {
			t.Fatalf("seed %d: after A the file holds %d bytes that are no prefix of B", seed, len(kept))
		}
		if l := loss.Files[0].Lost; l != int64(len(partB)-len(kept)) {
			t.Errorf("seed %d: loss says %d bytes lost, the file lost %d", seed, l, len(partB)-len(kept))
		}
		// A disk writes a sector whole or not at all: the file ends
		// where a write ended, or at a sector boundary.
		end := len(partA) + len(kept)
		if end%Sector != 0 && end != len(partA) && end != len(partA)+len(partB)/2 && end != len(partA)+len(partB) {
			t.Errorf("seed %d: torn left the file %d bytes long: neither a write's end nor a multiple of %d", seed, end, Sector)
		}
		cuts[len(kept)] = true
	}
	partial := 0
	for k := range cuts {
		if k > 0 && k < len(partB) {
			partial++
		}
	}
	if partial < 2 {
		t.Errorf("torn cut B at %v over 4 seeds, want at least two cuts inside it", cuts)
	}
	// The same seed, the same cut.
	a, _ := powerCycle(t, Torn, 3)
	b, _ := powerCycle(t, Torn, 3)
	if !bytes.Equal(a, b) {
		t.Errorf("seed 3 kept %d bytes, then %d", len(a), len(b))
	}
}

// TestRefusedWithoutFUSE runs the power failure as a user who is not root
// (nobody, through setpriv, when the test runs as root; else as itself):
// where that user can have FUSE the file holds A only afterwards, and
// where it cannot, Available and Mount refuse with the reason.
func TestRefusedWithoutFUSE(t *testing.T) {
	if os.Geteuid() != 0 {
		if err := Available(); err == nil {
			got, _ := powerCycle(t, LoseUnsynced, 1)
			if !bytes.Equal(got, partA) {
				t.Fatalf("as uid %d, after lose-unsynced the file holds %d bytes, want A only", os.Geteuid(), len(got))
			}
			return
		}
		err := Available()
		if !strings.Contains(err.Error(), "/dev/fuse") && !strings.Contains(err.Error(), "fusermount3") {
			t.Fatalf("refused with %q: it should say what is missing", err)
		}
		dir := t.TempDir()
		l, err2 := New(filepath.Join(dir, "b"), filepath.Join(dir, "m"), 1)
		if err2 != nil {
			t.Fatal(err2)
		}
		if err2 := l.Mount(); err2 == nil || err2.Error() != err.Error() {
			l.Close()
			t.Fatalf("Mount as uid %d: %v, want the refusal %q", os.Geteuid(), err2, err)
		}
		t.Logf("as uid %d: %v", os.Geteuid(), err)
		return
	}
	setpriv, err := exec.LookPath("setpriv") // util-linux, essential on Debian
	if err != nil {
		t.Skip("no setpriv to run the test as nobody")
	}
	// The test binary, where nobody may run it.
	dir, err := os.MkdirTemp("", "coup-storage-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	bin := filepath.Join(dir, "storage.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", bin,
		"-test.run=^TestRefusedWithoutFUSE$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

// A process killed with SIGKILL leaves its mount behind, dead; Sweep, as
// a later run does, names it and unmounts it, and leaves a mount that a
// live process serves alone.
func TestSweepUnmountsWhatAKilledProcessLeft(t *testing.T) {
	fuseOrSkip(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envMounter+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); detach(filepath.Join(dir, "data")) })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "mounted\n" {
		t.Fatalf("mounter said %q (%v)", line, err)
	}
	live := layer(t, 1) // another layer, served here, under another folder
	if swept, err := Sweep(dir); err != nil || len(swept) != 0 {
		t.Fatalf("Sweep of a mount a live process serves: %v, %v; want it left alone", swept, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	mp := filepath.Join(dir, "data")
	if mps, _ := Mounts(dir); len(mps) != 1 || mps[0] != mp {
		t.Fatalf("after the kill the mounts under %s are %v, want the dead %s", dir, mps, mp)
	}
	swept, err := Sweep(dir)
	if err != nil || len(swept) != 1 || swept[0] != mp {
		t.Fatalf("Sweep: %v, %v; want [%s]", swept, err, mp)
	}
	if mps, _ := Mounts(dir); len(mps) != 0 {
		t.Errorf("still mounted after the sweep: %v", mps)
	}
	if !live.Mounted() {
		t.Error("the live layer was unmounted")
	}
}
