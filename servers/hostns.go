package servers

import (
	"fmt"
	"time"

	"github.com/coupharness/coup/internal/proc"
)

// namespaceBox holds a host's processes in a PID namespace of their own
// (proc.Namespace), made for one start of the host: its init, coup's,
// starts each process of the host (in the host's network namespace,
// when the run gives it one), freezes and thaws them all at once
// (kill(-1, SIGSTOP), kill(-1, SIGCONT)) and kills them all, and its
// end is theirs. For a user who is not root.
type namespaceBox struct {
	iso *isolation
	ns  *proc.Namespace
}

func newNamespaceBox(iso *isolation, bs boxSpec) (*namespaceBox, error) {
	ns, err := proc.StartNamespace(proc.NamespaceSpec{NetNS: bs.netns, Log: bs.log})
	if err != nil {
		return nil, err
	}
	return &namespaceBox{iso: iso, ns: ns}, nil
}

func (b *namespaceBox) launch(ls launchSpec) (boxed, error) {
	m, err := b.ns.Start(proc.Spec{Argv: ls.argv, Env: ls.env, Dir: ls.dir, Log: ls.stderr, Stdout: ls.stdout, Credential: b.iso.cred})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// freeze stops every process of the namespace, and waits (up to 10s)
// until Linux says each is stopped: a signal is delivered
// asynchronously, and a process forked while the init's kill(-1, …) went
// through the namespace may have missed it, so the init stops again
// whatever still runs.
func (b *namespaceBox) freeze() error {
	if err := b.ns.Freeze(); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for try := 1; ; try++ {
		if try%10 == 0 {
			if err := b.ns.Freeze(); err != nil {
				return err
			}
		}
		running := 0
		for _, pid := range b.ns.Pids() {
			if !proc.PidStopped(pid) {
				running++
			}
		}
		if running == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes of the host's namespace still run 10s after SIGSTOP", running)
		}
		time.Sleep(time.Millisecond)
	}
}

func (b *namespaceBox) thaw() error  { return b.ns.Thaw() }
func (b *namespaceBox) kill()        { b.ns.Kill() }
func (b *namespaceBox) pids() []int  { return b.ns.Pids() }
func (b *namespaceBox) close() error { b.ns.Kill(); return nil }
