package servers

import (
	"slices"
	"syscall"

	"github.com/coupharness/coup/internal/clockfault"
	"github.com/coupharness/coup/internal/proc"
)

// groupBox holds a host's processes in one process group, led by the
// first (the server), which each later one joins: one signal (SIGKILL,
// SIGSTOP, SIGCONT) reaches them all, and the group goes with its
// leader (proc.Proc.Wait). It holds nothing that leaves the group: a
// daemon's setsid takes it out of the host's pause, crash and end. The
// isolation where neither a cgroup nor a namespace can be had.
type groupBox struct {
	iso    *isolation
	netns  string
	leader *proc.Proc
	procs  []*proc.Proc
}

func newGroupBox(iso *isolation, bs boxSpec) *groupBox { return &groupBox{iso: iso, netns: bs.netns} }

func (b *groupBox) launch(ls launchSpec) (boxed, error) {
	group := 0
	if b.leader != nil {
		group = b.leader.Pid()
	}
	p, err := proc.Start(proc.Spec{Argv: netnsArgv(b.netns, ls.argv), Env: ls.env, Dir: ls.dir, Log: ls.stderr,
		Stdout: ls.stdout, Group: group, Credential: b.iso.cred})
	if err != nil {
		return nil, err
	}
	p.Stdin.Close()
	if b.leader == nil {
		b.leader = p
	}
	b.procs = append(b.procs, p)
	return procBoxed{p}, nil
}

func (b *groupBox) freeze() error { return b.signal(syscall.SIGSTOP) }
func (b *groupBox) thaw() error   { return b.signal(syscall.SIGCONT) }

func (b *groupBox) signal(sig syscall.Signal) error {
	if b.leader == nil {
		return nil
	}
	return b.leader.Signal(sig)
}

func (b *groupBox) kill() {
	if b.leader == nil {
		return
	}
	_ = b.leader.Kill() // the group: the server and every sidecar
	for _, p := range b.procs[1:] {
		_ = p.Kill() // one that left the group (setsid) too
	}
}

// pids are the processes of the leader's group, and every process the
// box started that left it.
func (b *groupBox) pids() []int {
	if b.leader == nil {
		return nil
	}
	out := clockfault.Group(b.leader.Pid())
	for _, p := range b.procs[1:] {
		if !slices.Contains(out, p.Pid()) {
			out = append(out, p.Pid())
		}
	}
	return out
}

func (b *groupBox) close() error { return nil }

// procBoxed is a process started by package proc.
type procBoxed struct{ p *proc.Proc }

func (p procBoxed) Pid() int { return p.p.Pid() }

func (p procBoxed) Wait() string {
	state, _ := p.p.Wait()
	if state == nil {
		return "unknown"
	}
	return state.String()
}

// netnsArgv is a command that starts in the network namespace netns,
// when there is one (nsenter enters it and executes the command in its
// own process: the pid is the command's).
func netnsArgv(netns string, argv []string) []string {
	if netns == "" {
		return argv
	}
	return append([]string{"nsenter", "--net=" + netns, "--"}, argv...)
}
