package proc

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// reaperScript keeps the set of live process groups it is told of ("+ G"
// and "- G" lines), and of cgroups ("c PATH" and "C PATH": a host's, as
// root), and, when its input ends (the harness exited or was killed),
// kills every group still in the set, and every process of each cgroup
// (cgroup.kill), and removes the cgroups once they are empty. It ignores the signals a
// terminal or a supervisor sends a whole session, so that it outlives the
// harness long enough to do its work.
const reaperScript = `trap '' INT TERM HUP QUIT
groups=" "
cgroups=" "
while read -r op pg; do
  case $op in
    +) groups="$groups$pg " ;;
    -) case "$groups" in *" $pg "*) groups="${groups%% $pg *} ${groups#* $pg }" ;; esac ;;
    c) cgroups="$cgroups$pg " ;;
    C) case "$cgroups" in *" $pg "*) cgroups="${cgroups%% $pg *} ${cgroups#* $pg }" ;; esac ;;
  esac
done
for pg in $groups; do kill -s KILL -- "-$pg" 2>/dev/null; done
for cg in $cgroups; do echo 1 >"$cg/cgroup.kill" 2>/dev/null; done
for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  left=""
  for cg in $cgroups; do rmdir "$cg" 2>/dev/null || left="$left $cg"; done
  [ -z "$left" ] && break
  cgroups="$left"
  sleep 0.1
done
`

// reaper is the harness's one reaper process, started with the first node.
var reaper groupReaper

type groupReaper struct {
	once sync.Once
	mu   sync.Mutex
	in   io.WriteCloser // nil when the reaper could not start, or has gone
	// Lines are written in batches: a teller appends its line to pending
	// and waits until a write has carried it (written counts the lines
	// carried, queued those appended). One teller writes at a time, with
	// whatever the others appended meanwhile, so that a thousand starts at
	// once wait for a few writes, not for a thousand in a row, each of
	// which may wait for the shell to be scheduled.
	pending         []byte
	queued, written uint64
	writing         bool
	wrote           *sync.Cond
}

func (r *groupReaper) start() {
	r.wrote = sync.NewCond(&r.mu)
	cmd := exec.Command("/bin/sh", "-c", reaperScript)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not the terminal's group
	in, err := cmd.StdinPipe()
	if err != nil {
		return
	}
	if err := cmd.Start(); err != nil {
		return
	}
	go func() { _ = cmd.Wait() }() // it ends when the harness does
	r.in = in
}

// watch tells the reaper of a new process group.
func (r *groupReaper) watch(pgid int) { r.tell('+', pgid) }

// forget tells the reaper that a process group is gone.
func (r *groupReaper) forget(pgid int) { r.tell('-', pgid) }

// WatchCgroup tells the reaper of a cgroup (a folder without spaces)
// whose processes it must kill, and which it must remove, if coup is
// killed before it does so itself; ForgetCgroup, that it is gone.
func WatchCgroup(path string)  { reaper.tell('c', path) }
func ForgetCgroup(path string) { reaper.tell('C', path) }

// tell writes one line to the reaper, and returns once it is written (or
// the reaper is gone).
func (r *groupReaper) tell(op byte, what any) {
	r.once.Do(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in == nil {
		return
	}
	r.pending = fmt.Appendf(r.pending, "%c %v\n", op, what)
	r.queued++
	mine := r.queued
	for r.written < mine && r.in != nil {
		if r.writing {
			r.wrote.Wait()
			continue
		}
		r.writing = true
		batch, upto, in := r.pending, r.queued, r.in
		r.pending = nil
		r.mu.Unlock()
		_, err := in.Write(batch)
		r.mu.Lock()
		r.writing = false
		r.written = upto
		if err != nil {
			r.in = nil // the reaper is gone; nodes still die with the harness
		}
		r.wrote.Broadcast()
	}
}
