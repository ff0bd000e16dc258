package servers

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coupharness/coup/internal/proc"
)

// cgroupBox holds a host's processes in a cgroup v2 group of its own,
// made for one start of the host under coup's own cgroup and removed
// after it: every process starts in it (proc.Spec.Cgroup, before it runs
// anything) and whatever it forks stays there, setsid or not. A freeze
// writes cgroup.freeze and waits until the kernel says the group is
// frozen; a kill writes cgroup.kill, which ends every process of the
// group at once, frozen ones too. The proc package's reaper is told of
// the group, so that a coup killed with SIGKILL leaves none behind.
type cgroupBox struct {
	iso   *isolation
	netns string
	path  string
	dir   *os.File
	// procs are the processes started here, each in a process group of
	// its own, the first leading (Ctrl-C at a terminal reaches coup only).
	procs []*proc.Proc
}

// cgroupParent is the folder under which a host's cgroup is made: coup's
// own cgroup in the unified (v2) hierarchy, found from
// /proc/self/mountinfo and /proc/self/cgroup, if it can be written and
// has cgroup.kill and cgroup.freeze; else why not.
func cgroupParent() (string, error) {
	mount, err := proc.CgroupMount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(mount, own)
	probe, err := os.MkdirTemp(dir, "coup-probe-")
	if err != nil {
		return "", fmt.Errorf("a cgroup cannot be made under %s: %w", dir, err)
	}
	defer os.Remove(probe)
	for _, f := range []string{"cgroup.kill", "cgroup.freeze"} {
		if _, err := os.Stat(filepath.Join(probe, f)); err != nil {
			return "", fmt.Errorf("the cgroups under %s have no %s (a kernel before 5.14)", dir, f)
		}
	}
	return dir, nil
}

// ownCgroup is coup's cgroup in the unified hierarchy (the "0::" line of
// /proc/self/cgroup).
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("coup is in no cgroup v2 group (/proc/self/cgroup has no 0:: line)")
}

func newCgroupBox(iso *isolation, bs boxSpec) (*cgroupBox, error) {
	path := filepath.Join(iso.cgroups, fmt.Sprintf("coup-%d-%s-%d", os.Getpid(), bs.host, bs.inc))
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil, fmt.Errorf("make the host's cgroup: %w", err)
	}
	dir, err := os.Open(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("open the host's cgroup: %w", err)
	}
	proc.WatchCgroup(path)
	return &cgroupBox{iso: iso, netns: bs.netns, path: path, dir: dir}, nil
}

func (b *cgroupBox) launch(ls launchSpec) (boxed, error) {
	group := 0
	if len(b.procs) > 0 {
		group = b.procs[0].Pid()
	}
	p, err := proc.Start(proc.Spec{Argv: netnsArgv(b.netns, ls.argv), Env: ls.env, Dir: ls.dir, Log: ls.stderr,
		Stdout: ls.stdout, Group: group, Cgroup: b.dir, Credential: b.iso.cred})
	if err != nil {
		return nil, err
	}
	p.Stdin.Close()
	b.procs = append(b.procs, p)
	return procBoxed{p}, nil
}

func (b *cgroupBox) write(file, v string) error {
	return os.WriteFile(filepath.Join(b.path, file), []byte(v), 0)
}

// events reads one key of cgroup.events ("frozen", "populated").
func (b *cgroupBox) events(key string) string {
	data, err := os.ReadFile(filepath.Join(b.path, "cgroup.events"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			return v
		}
	}
	return ""
}

// await polls cgroup.events until key reads v, for up to 10 seconds.
func (b *cgroupBox) await(key, v string) error {
	deadline := time.Now().Add(10 * time.Second)
	for b.events(key) != v {
		if time.Now().After(deadline) {
			return fmt.Errorf("the host's cgroup %s: %s is not %s after 10s", b.path, key, v)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func (b *cgroupBox) freeze() error {
	if err := b.write("cgroup.freeze", "1"); err != nil {
		return err
	}
	return b.await("frozen", "1")
}

func (b *cgroupBox) thaw() error {
	if err := b.write("cgroup.freeze", "0"); err != nil {
		return err
	}
	return b.await("frozen", "0")
}

func (b *cgroupBox) kill() { _ = b.write("cgroup.kill", "1") }

// pids are cgroup.procs.
func (b *cgroupBox) pids() []int {
	data, err := os.ReadFile(filepath.Join(b.path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// close waits until the cgroup is empty, killing again what is left (a
// process that started as it was killed), and removes it.
func (b *cgroupBox) close() error {
	b.dir.Close()
	var err error
	for range 3 {
		if err = b.await("populated", "0"); err == nil {
			break
		}
		b.kill()
	}
	if err == nil {
		err = os.Remove(b.path)
	}
	if err == nil {
		proc.ForgetCgroup(b.path)
	}
	return err
}

// userCredential is the credential of a user by name, with its groups.
func userCredential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("user = %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user = %q: uid %s and gid %s are not numbers", name, u.Uid, u.Gid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	return cred, nil
}
