package hostnet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// NamespaceDir is where `ip netns` keeps the namespaces it names, one
// file each: a namespace of a run is there as long as the run is.
const NamespaceDir = "/run/netns"

// namePrefix starts the name of every namespace a run of coup makes:
// coup-PID-TAG-HOST, PID being coup's process, TAG the network's (drawn
// at random, so that networks of one process differ) and HOST the host's
// name. Leftovers finds a run's namespaces by it, and whether the coup
// that made them is still alive.
const namePrefix = "coup-"

// nsName is the name of host's namespace in the network tagged tag.
func nsName(tag, host string) string {
	return fmt.Sprintf("%s%d-%s-%s", namePrefix, os.Getpid(), tag, host)
}

// ipCmd runs `ip` with args and stdin (nil for none), and returns its
// error with what it wrote.
func ipCmd(stdin []byte, args ...string) error {
	cmd := exec.Command("ip", args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// addNamespace makes a named network namespace and opens it.
func addNamespace(name string) (*os.File, error) {
	if err := ipCmd(nil, "netns", "add", name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(NamespaceDir, name))
	if err != nil {
		_ = deleteNamespace(name)
		return nil, err
	}
	return f, nil
}

// deleteNamespace removes a named namespace: its name at once, the
// namespace itself once nothing holds it (no process in it, no open
// file of it), and with it every interface in it.
func deleteNamespace(name string) error {
	return ipCmd(nil, "netns", "delete", name)
}

// inNamespace runs f on an OS thread that has entered the namespace ns,
// then takes the thread back to coup's own namespace. A socket made by f
// stays in ns for its life, whatever thread later uses it; a process f
// starts starts in ns. Should the way back fail, the thread stays locked
// to the goroutine and ends with it (the Go runtime then terminates it),
// so no other goroutine ever runs in ns by mistake.
func inNamespace(ns *os.File, f func() error) error {
	home, err := homeNamespace()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter the network namespace %s: %w", ns.Name(), err)
	}
	ferr := f()
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		return errors.Join(ferr, fmt.Errorf("return to coup's network namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// home is coup's own network namespace, opened once: the main thread's,
// which never leaves it.
var homeOnce sync.Once

var home struct {
	f   *os.File
	err error
}

func homeNamespace() (*os.File, error) {
	homeOnce.Do(func() { home.f, home.err = os.Open("/proc/self/ns/net") })
	return home.f, home.err
}

// Leftovers removes the namespaces of runs whose coup is no longer
// alive (killed before it could remove them), and returns their names.
// Every network calls it as it starts; a test may too.
func Leftovers() ([]string, error) {
	ents, err := os.ReadDir(NamespaceDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		pid, ok := ownerOf(e.Name())
		if !ok || alive(pid) {
			continue
		}
		if err := deleteNamespace(e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

// Ours lists the namespaces this process has made and not yet removed.
func Ours() []string {
	ents, _ := os.ReadDir(NamespaceDir)
	var out []string
	for _, e := range ents {
		if pid, ok := ownerOf(e.Name()); ok && pid == os.Getpid() {
			out = append(out, e.Name())
		}
	}
	return out
}

// ownerOf is the pid in a namespace name of coup's.
func ownerOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	pid, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
