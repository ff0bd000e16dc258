package proc

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// reaperScript keeps the set of live process groups it is told of ("+ G"
// and "- G" lines) and, when its input ends (the harness exited or was
// killed), kills every group still in the set. It ignores the signals a
// terminal or a supervisor sends a whole session, so that it outlives the
// harness long enough to do its work.
const reaperScript = `trap '' INT TERM HUP QUIT
groups=" "
while read -r op pg; do
  case $op in
    +) groups="$groups$pg " ;;
    -) case "$groups" in *" $pg "*) groups="${groups%% $pg *} ${groups#* $pg }" ;; esac ;;
  esac
done
for pg in $groups; do kill -s KILL -- "-$pg" 2>/dev/null; done
`

// reaper is the harness's one reaper process, started with the first node.
var reaper groupReaper

type groupReaper struct {
	once sync.Once
	mu   sync.Mutex
	in   io.WriteCloser // nil when the reaper could not start
}

func (r *groupReaper) start() {
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

func (r *groupReaper) tell(op byte, pgid int) {
	r.once.Do(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in == nil {
		return
	}
	if _, err := fmt.Fprintf(r.in, "%c %d\n", op, pgid); err != nil {
		r.in = nil // the reaper is gone; nodes still die with the harness
	}
}
