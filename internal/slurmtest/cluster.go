package slurmtest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/internal/needs"
)

// Cluster is a running Slurm cluster of one node, this machine.
type Cluster struct {
	// Dir holds every file of the cluster: munge's key and socket,
	// slurm.conf, slurmctld's state, slurmd's spool, logs and pid files.
	Dir string
	// Conf is the cluster's slurm.conf, SLURM_CONF of every command.
	Conf string
	// Host is the node's name: this machine's short host name.
	Host string

	t       testing.TB
	tag     string // NAME=VALUE, in the environment of all the cluster's processes
	netns   string // the daemons' network namespace, /proc/PID/ns/net
	daemons []*daemon
}

// daemon is a process the cluster started and stops.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once it has exited and been waited for
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

const tagName = "COUP_SLURMTEST"

// Start starts munged, slurmctld and slurmd, and returns once the node
// is idle; or skips t when a program is missing or t is not root. The
// cluster ends with t.
func Start(t testing.TB) *Cluster {
	t.Helper()
	munged := needs.Program(t, "munged", "munge")
	ctld := needs.Program(t, "slurmctld", "slurm-wlm")
	slurmd := needs.Program(t, "slurmd", "slurm-wlm")
	needs.Program(t, "sbatch", "slurm-wlm")
	needs.Program(t, "ip", "iproute2")
	nsenter, err := exec.LookPath("nsenter") // util-linux, Essential in Debian
	if err != nil {
		t.Skip(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a Slurm cluster needs root: slurmd starts jobs as their user, and its network namespace is root's to make")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".") // slurmd finds its NodeName so
	dir, err := os.MkdirTemp("", "coup-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{
		Dir:  dir,
		Conf: filepath.Join(dir, "slurm.conf"),
		Host: host,
		t:    t,
		tag:  fmt.Sprintf("%s=%d-%d", tagName, os.Getpid(), time.Now().UnixNano()),
	}
	t.Cleanup(c.stop)
	// munged refuses a socket in a folder that not everyone may search.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "munge.socket")
	m := c.start("munged", munged, "-F", "--socket="+socket, "--key-file="+filepath.Join(dir, "munge.key"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"),
		"--log-file="+filepath.Join(dir, "munged.log"))
	c.await(10*time.Second, "munged's socket", func() bool {
		_, err := os.Stat(socket)
		return err == nil
	}, m)

	if err := os.WriteFile(c.Conf, []byte(conf(dir, host, socket)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugstack.conf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// slurmctld in a network namespace of its own, with loopback up.
	// Slurm resolves 127.0.0.1 with AI_ADDRCONFIG, which glibc answers
	// for IPv4 only where an IPv4 address other than 127.0.0.1 is
	// configured: 127.0.0.2, on loopback too, is that address.
	s := c.startIn(&syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL},
		"slurmctld", "sh", "-c", `ip link set lo up && ip addr add 127.0.0.2/32 dev lo && exec "$0" -D -c -f "$1"`, ctld, c.Conf)
	c.netns = fmt.Sprintf("/proc/%d/ns/net", s.cmd.Process.Pid)
	c.await(30*time.Second, "slurmctld", func() bool {
		return c.Command("sinfo", "-h").Run() == nil
	}, m, s)
	d := c.start("slurmd", nsenter, "--net="+c.netns, "--", slurmd, "-D", "-f", c.Conf, "-N", host)
	c.await(60*time.Second, "node "+host+" idle", func() bool {
		out, err := c.Command("sinfo", "-h", "-n", host, "-o", "%T").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	}, m, s, d)
	return c
}

// conf is the cluster's slurm.conf: everything in dir, the controller
// and the node this host at 127.0.0.1 (of their namespace), with 2 CPUs
// whatever the machine has, no accounting, no cgroups.
func conf(dir, host, socket string) string {
	f := func(name string) string { return filepath.Join(dir, name) }
	return fmt.Sprintf(`# coup's slurmtest: a cluster of one node, for one test.
ClusterName=couptest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[2]s
StateSaveLocation=%[3]s
SlurmdSpoolDir=%[4]s
SlurmctldPidFile=%[5]s
SlurmdPidFile=%[6]s
SlurmctldLogFile=%[7]s
SlurmdLogFile=%[8]s
PlugStackConfig=%[9]s
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=2
SlurmdParameters=config_overrides
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, socket, f("state"), f("spool"), f("slurmctld.pid"), f("slurmd.pid"),
		f("slurmctld.log"), f("slurmd.log"), f("plugstack.conf"))
}

// Command is a command run in the cluster's network namespace, with
// SLURM_CONF the cluster's: sbatch, squeue, scontrol, or a script that
// calls them. Its environment is the test's, with SLURM_CONF and the
// cluster's tag added; its folder Dir, so that a job submitted without
// --output writes its slurm-JOBID.out there, and it goes with the rest.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("nsenter", append([]string{"--net=" + c.netns, "--", name}, args...)...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, c.tag)
	cmd.Dir = c.Dir
	return cmd
}

// start starts a daemon in the test's namespaces.
func (c *Cluster) start(name, path string, args ...string) *daemon {
	return c.startIn(&syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}, name, path, args...)
}

// startIn starts a daemon, its output in Dir/NAME.out; it dies with
// the test (the parent-death signal), though slurmstepd does not.
func (c *Cluster) startIn(attr *syscall.SysProcAttr, name, path string, args ...string) *daemon {
	c.t.Helper()
	log := filepath.Join(c.Dir, name+".out")
	out, err := os.Create(log)
	if err != nil {
		c.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(path, args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf, c.tag)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { cmd.Wait(); close(d.done) }()
	c.daemons = append(c.daemons, d)
	return d
}

// await polls cond until it holds, failing t when timeout passes first
// or when one of the daemons has exited.
func (c *Cluster) await(timeout time.Duration, what string, cond func() bool, ds ...*daemon) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, d := range ds {
			if d.exited() {
				c.t.Fatalf("waiting for %s: %s exited (%v); its output:\n%s", what, d.name, d.cmd.ProcessState, tail(d.log))
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: not after %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop cancels every job, stops the daemons by pid, newest first, kills
// any process left with the cluster's tag, and removes Dir.
func (c *Cluster) stop() {
	if c.netns != "" && len(c.daemons) >= 2 && !c.daemons[1].exited() {
		if u, err := user.Current(); err == nil {
			c.Command("scancel", "--user="+u.Username).Run()
		}
		// Jobs' processes end before slurmd does (KillWait is 2s).
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			out, err := c.Command("squeue", "-h", "-o", "%i").Output()
			if err != nil || len(bytes.TrimSpace(out)) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			c.t.Errorf("%s (pid %d) did not end on SIGTERM in 10s: killed", d.name, d.cmd.Process.Pid)
			d.cmd.Process.Kill()
			<-d.done
		}
	}
	if left := Tagged(c.tag); len(left) > 0 {
		c.t.Errorf("processes of the cluster left after it stopped, killed: %s", describe(left))
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(Tagged(c.tag)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if c.t.Failed() {
		for _, name := range []string{"munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"} {
			c.t.Logf("%s:\n%s", name, tail(filepath.Join(c.Dir, name)))
		}
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		c.t.Error(err)
	}
}

// Tagged lists the live processes (zombies are not) whose environment
// holds tag, NAME=VALUE.
func Tagged(tag string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+tag+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		pids = append(pids, pid)
	}
	return pids
}

// describe names each pid's command line, for a message.
func describe(pids []int) string {
	var s []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		s = append(s, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	return strings.Join(s, ", ")
}

// tail is the end of a log file, for a message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = append([]byte("…"), b[len(b)-4000:]...)
	}
	return string(b)
}
