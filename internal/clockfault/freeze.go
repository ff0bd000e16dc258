package clockfault

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// How long a freeze waits for every thread to stop, and how many times it
// tries to catch a process with no thread inside the range it patches.
const (
	stopTimeout = 2 * time.Second
	freezeTries = 50
)

// freeze stops a process (SIGSTOP) until clear says that none of its
// threads is where the patch would harm it, calls fn, and continues the
// process (SIGCONT). A process that
// is stopped already (paused by a fault) is patched as it is and left
// stopped. The patch must not be torn under a running thread, nor leave a
// thread between two instructions that no longer exist: a thread found
// inside the range is let go and caught again, a moment later.
//
// No ptrace: coup waits on its children from other goroutines, and a
// tracer's stops would be reported to those waits as if the child had
// ended. Stopping by signal is seen by no wait of coup's.
//
// A thread that a signal handler interrupted at such a place, and that
// is in the handler when it is caught, is not seen: its place is on its
// signal stack. The first instructions of a clock read last a few
// nanoseconds, so this is left to chance.
func freeze(pid int, clear func([]thread) bool, fn func() error) error {
	st, err := readStat(pid)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	stopped := st.state == 'T' || st.state == 't'
	if stopped {
		// Stopped by someone else: its threads may still be on their
		// way to the stop.
		if err := waitStopped(pid); err != nil {
			return err
		}
	}
	for try := 1; ; try++ {
		if !stopped {
			if err := stopAll(pid); err != nil {
				return err
			}
		}
		ts, err := threadsAt(pid)
		inside := err == nil && !clear(ts)
		if err == nil && !inside {
			err = fn()
		}
		if !stopped {
			if cerr := signal(pid, syscall.SIGCONT); cerr != nil && err == nil {
				err = fmt.Errorf("process %d: continue: %w", pid, goneOr(pid, cerr))
			}
		}
		switch {
		case err != nil:
			return err
		case !inside:
			return nil
		case stopped:
			return fmt.Errorf("process %d is stopped with a thread inside its clock functions: its clock cannot be changed until it runs again: %w", pid, errBusy)
		case try == freezeTries:
			return fmt.Errorf("process %d: a thread was inside its clock functions each of the %d times coup stopped it: %w", pid, freezeTries, errBusy)
		}
		time.Sleep(time.Duration(try) * time.Millisecond)
	}
}

// stopAll sends SIGSTOP and waits until every thread of the process is
// stopped.
func stopAll(pid int) error {
	if err := signal(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("process %d: stop: %w", pid, goneOr(pid, err))
	}
	if err := waitStopped(pid); err != nil {
		_ = signal(pid, syscall.SIGCONT)
		return err
	}
	return nil
}

// waitStopped waits until every thread of a process is stopped.
func waitStopped(pid int) error {
	deadline := time.Now().Add(stopTimeout)
	for {
		all, err := allStopped(pid)
		if err != nil {
			return err
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d: its threads did not all stop within %s", pid, stopTimeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func threads(pid int) ([]string, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
	}
	var out []string
	for _, e := range ents {
		out = append(out, fmt.Sprintf("/proc/%d/task/%s", pid, e.Name()))
	}
	return out, nil
}

func allStopped(pid int) (bool, error) {
	ts, err := threads(pid)
	if err != nil {
		return false, err
	}
	for _, t := range ts {
		st, err := readStatFile(t + "/stat")
		if err != nil {
			continue // the thread has just ended
		}
		switch st.state {
		case 'T', 't', 'Z', 'X':
		default:
			return false, nil
		}
	}
	return true, nil
}

// errBusy is a process whose threads were never all clear of the patch.
var errBusy = errors.New("busy")

// thread is where a stopped thread is: its instruction and stack
// pointers.
type thread struct{ pc, sp uint64 }

// threadsAt reads where each stopped thread of a process is, from
// /proc/PID/task/TID/syscall (its last two fields, whether or not the
// thread is in a system call).
func threadsAt(pid int) ([]thread, error) {
	ts, err := threads(pid)
	if err != nil {
		return nil, err
	}
	var out []thread
	for _, t := range ts {
		b, err := os.ReadFile(t + "/syscall")
		if err != nil {
			if _, serr := os.Stat(t); serr != nil {
				continue
			}
			return nil, fmt.Errorf("process %d: where its threads are: %v", pid, unwrapErrno(err))
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			return nil, fmt.Errorf("process %d: a thread still runs (%s says %q)", pid, t, strings.TrimSpace(string(b)))
		}
		sp, err1 := strconv.ParseUint(strings.TrimPrefix(f[len(f)-2], "0x"), 16, 64)
		pc, err2 := strconv.ParseUint(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("process %d: %s: %q", pid, t, b)
		}
		out = append(out, thread{pc: pc, sp: sp})
	}
	return out, nil
}
