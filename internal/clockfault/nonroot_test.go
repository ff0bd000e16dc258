package clockfault

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tracer is the test binary run as a user who is not root: it starts a
// probe, its child, and skews the probe's clock.
func tracer() int {
	fail := func(format string, args ...any) int {
		fmt.Printf("FAIL "+format+"\n", args...)
		return 1
	}
	if os.Geteuid() == 0 {
		return fail("running as root")
	}
	exe, _ := os.Executable()
	p := startCmd(&testing.T{}, exec.Command(exe), nil, "CLOCKFAULT_ROLE=probe")
	defer p.stop()
	if err := Check(); err != nil {
		return fail("check: %v", err)
	}
	if err := Apply(p.pid(), Begin(Skew{Offset: time.Hour, Realtime: true})); err != nil {
		return fail("apply: %v", err)
	}
	if d := p.wallSkew() - time.Hour; d < -50*time.Millisecond || d > 50*time.Millisecond {
		return fail("the probe's wall clock is %v off the hour", d)
	}
	if err := Reset(p.pid()); err != nil {
		return fail("reset: %v", err)
	}
	if d := p.wallSkew(); d < -50*time.Millisecond || d > 50*time.Millisecond {
		return fail("after the reset, the probe's wall clock is %v off", d)
	}
	// A process that is not its descendant and not its user's: refused,
	// with the reason.
	err := Apply(1, Begin(Skew{Offset: time.Hour, Realtime: true}))
	if err == nil || !strings.Contains(err.Error(), "may not write") {
		return fail("apply to pid 1: got %v, want a refusal that says why", err)
	}
	fmt.Println("OK", err)
	return 0
}

// TestNotRoot applies a clock fault as a user who is not root (nobody),
// to its own child: what coup's users in CI are.
func TestNotRoot(t *testing.T) {
	needMachine(t)
	if os.Geteuid() != 0 {
		// Already not root: the other tests say it all.
		t.Skip("not root: the other tests run as a user who is not root")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "clockfault")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	copyTo := filepath.Join(dir, "clockfault.test")
	src, _ := os.Open(exe)
	dst, _ := os.OpenFile(copyTo, os.O_CREATE|os.O_WRONLY, 0o755)
	io.Copy(dst, src)
	src.Close()
	dst.Close()
	cmd := exec.Command(copyTo)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLOCKFAULT_ROLE=tracer")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "OK") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody: %s", out)
}
