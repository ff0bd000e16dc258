package proc

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A process that joins another's group (Spec.Group) is stopped and
// continued with its leader's group, signalled alone by its own Proc, and
// goes when its leader is killed.
func TestMemberSharesItsLeadersGroup(t *testing.T) {
	log, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	leader, err := Start(Spec{Argv: []string{"sleep", "60"}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Kill()
	member, err := Start(Spec{Argv: []string{"sleep", "60"}, Log: log, Group: leader.Pid()})
	if err != nil {
		t.Fatal(err)
	}
	defer member.Kill()
	if g, err := syscall.Getpgid(member.Pid()); err != nil || g != leader.Pid() {
		t.Fatalf("the member's group is %d (%v), want its leader's, %d", g, err, leader.Pid())
	}

	if err := leader.Pause(); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, leader, true)
	waitStopped(t, member, true)
	if err := leader.Resume(); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, leader, false)
	waitStopped(t, member, false)

	// The member's own signal reaches it alone.
	if err := member.Pause(); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, member, true)
	if leader.Stopped() {
		t.Error("pausing the member stopped its leader too")
	}
	if err := member.Resume(); err != nil {
		t.Fatal(err)
	}

	// The leader's end is the group's.
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.Wait(); err == nil {
		t.Error("the killed leader exited cleanly")
	}
	st, _ := member.Wait()
	if st == nil || st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the member ended %v, want killed with its leader's group", st)
	}
}

// waitStopped polls until p is stopped (or running), as /proc says: a
// signal is delivered asynchronously, so the state is observed, not
// assumed. It fails the test after 10 seconds.
func waitStopped(t *testing.T, p *Proc, stopped bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stopped() != stopped {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: stopped %v, never %v", p.Pid(), !stopped, stopped)
		}
		time.Sleep(time.Millisecond)
	}
}
