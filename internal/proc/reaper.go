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
	// Lines are written in batches, by one goroutine at a time (writing),
	// with whatever was told meanwhile (pending): a teller does not wait
	// for its line, so that a thousand starts at once do not queue behind
	// the writes, or behind each other's wake-ups (which, at a second of a
	// thousand nodes' start, cost more than the writes). queued counts the
	// lines told, written those carried; Sync waits for them to meet.
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
// killed before it does so itself; ForgetCgroup, that it is gone. Both
// return once the reaper has the line.
func WatchCgroup(path string)  { reaper.tell('c', path); SyncReaper() }
func ForgetCgroup(path string) { reaper.tell('C', path); SyncReaper() }

// tell hands one line to the reaper's writer, started if none runs.
func (r *groupReaper) tell(op byte, what any) {
	r.once.Do(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in == nil {
		return
	}
	r.pending = fmt.Appendf(r.pending, "%c %v\n", op, what)
	r.queued++
	if !r.writing {
		r.writing = true
		go r.write()
	}
}

// write writes what is pending until nothing is.
func (r *groupReaper) write() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.pending) > 0 && r.in != nil {
		batch, upto, in := r.pending, r.queued, r.in
		r.pending = nil
		r.mu.Unlock()
		_, err := in.Write(batch)
		r.mu.Lock()
		r.written = upto
		if err != nil {
			r.in = nil // the reaper is gone; nodes still die with the harness
		}
		r.wrote.Broadcast()
	}
	r.writing = false
	r.wrote.Broadcast()
}

// SyncReaper returns once the reaper has been told of every process group
// and cgroup told so far (or is gone): coup run calls it before it says
// its nodes are up, so that a coup killed from then on leaves none behind.
func SyncReaper() {
	r := &reaper
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.in != nil && r.written < r.queued {
		r.wrote.Wait()
	}
}
