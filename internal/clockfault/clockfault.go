package clockfault

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
)

var machine struct {
	once sync.Once
	l    *layout
	err  error
}

// machineLayout plans the patch once, from coup's own vDSO, which no one
// patches: every process here maps the same image.
func machineLayout() (*layout, error) {
	machine.once.Do(func() {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			machine.err = fmt.Errorf("clock faults on real processes need Linux on x86-64, and this is %s/%s", runtime.GOOS, runtime.GOARCH)
			return
		}
		pid := os.Getpid()
		m, err := openMem(pid)
		if err != nil {
			machine.err = err
			return
		}
		defer m.close()
		img, err := m.read(m.base, m.size)
		if err != nil {
			machine.err = err
			return
		}
		if machine.l, machine.err = planLayout(img); machine.err != nil {
			return
		}
		// The kernel must let a write through the vDSO's read-only
		// mapping (proc_mem.force_override): tried on coup's own, with
		// the byte that is there.
		at := m.base + uint64(machine.l.block)
		if err := m.write(at, img[machine.l.block:machine.l.block+1]); err != nil {
			machine.l, machine.err = nil, fmt.Errorf("this kernel does not let coup write a process's vDSO through /proc/PID/mem (%v): its proc_mem.force_override must not be never or ptrace", errors.Unwrap(err))
		}
	})
	return machine.l, machine.err
}

// Check says whether clock faults can reach processes on this machine:
// Linux on x86-64, a vDSO whose clock functions coup can hook, a kernel
// that lets coup write a process's vDSO, and Yama's leave. It touches no
// process but coup's own.
func Check() error {
	if _, err := machineLayout(); err != nil {
		return err
	}
	if s := YamaScope(); s >= 2 && !(s == 2 && os.Geteuid() == 0) {
		return errors.New(permissionHint())
	}
	return nil
}

// Reachable says whether the program at path reads its clock in a way
// coup can reach: through the vDSO, as Go's runtime, glibc, musl and the
// JVM do. A script or a dynamically linked program is reachable (its
// interpreter or its C library uses the vDSO); a static program is only
// if it looks the vDSO's clock_gettime up, which a program that makes
// the system call itself does not.
func Reachable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != "\x7fELF" {
		return nil // a script: its interpreter is checked when it runs
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte("__vdso_clock_gettime")) {
		return fmt.Errorf("%s is a static program that never looks up the vDSO's clock_gettime: it reads its clock by system calls, which coup cannot reach", path)
	}
	return nil
}

// Apply makes a process's clocks read as the setting says, from now on:
// the first time, it puts the hook into the process's vDSO (stopping the
// process for a moment); after that, it only changes the parameters the
// hook reads, which needs no stop.
func Apply(pid int, s Setting) error {
	l, err := machineLayout()
	if err != nil {
		return err
	}
	if s.Rate < 0 || s.Rate > MaxRate {
		return fmt.Errorf("rate %g is out of range (0, %d]", s.Rate, MaxRate)
	}
	m, err := openMem(pid)
	if err != nil {
		return err
	}
	defer m.close()
	img, err := m.read(m.base, m.size)
	if err != nil {
		return err
	}
	hooked, block, err := l.state(img)
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	blk := m.base + uint64(l.block)
	if block {
		// The block is there (in use, or left by a reset): a new
		// setting goes into the slot not in use, then gen points at it.
		gen := binary.LittleEndian.Uint64(img[l.block+offGen:]) + 1
		if err := m.write(blk+offSlots+uint64(48*(gen&1)), s.slot()); err != nil {
			return err
		}
		if err := m.write(blk+offGen, binary.LittleEndian.AppendUint64(nil, gen)); err != nil {
			return err
		}
	} else {
		code := append([]byte(nil), l.code...)
		copy(code[offSlots:], s.slot())
		counters, err := countersAt(pid)
		if err != nil {
			return err
		}
		if counters != 0 {
			if err := m.write(counters, make([]byte, countersSize)); err != nil {
				return err
			}
			binary.LittleEndian.PutUint64(code[offCounts:], counters)
		}
		// Nothing runs in the tail of the page: the block goes in
		// while the process runs.
		if err := m.write(blk, code); err != nil {
			return err
		}
	}
	if hooked {
		return nil
	}
	// The jumps go in while no thread is within the instructions they
	// cover (its first instruction is fine: it will jump), nor was when a
	// signal handler it is running interrupted it: the handler's signal
	// frame, on the top of its stack, holds where it will return.
	inside := func(v uint64) bool {
		for _, e := range l.entries {
			if at := m.base + uint64(e.off); v > at && v < at+uint64(e.keep) {
				return true
			}
		}
		return false
	}
	return freeze(pid, func(ts []thread) bool {
		for _, t := range ts {
			if inside(t.pc) || stackHolds(m, t.sp, inside) {
				return false
			}
		}
		return true
	}, func() error {
		for _, e := range l.entries {
			if err := m.write(m.base+uint64(e.off), e.patch); err != nil {
				return err
			}
		}
		return nil
	})
}

// Reset puts a process's clocks right: the vDSO's functions as the kernel
// made them, and the read counters zeroed. The hook's block stays in the
// tail of the page, unreachable: a thread may still be on its way through
// it (or have been interrupted there by a signal whose handler it is
// running), and the next clock fault uses it again. A process that coup
// never patched is left alone.
func Reset(pid int) error {
	l, err := machineLayout()
	if err != nil {
		return err
	}
	m, err := openMem(pid)
	if err != nil {
		return err
	}
	defer m.close()
	img, err := m.read(m.base, m.size)
	if err != nil {
		return err
	}
	hooked, block, err := l.state(img)
	if err != nil || !block {
		return err
	}
	if hooked {
		// A jump is one instruction: no thread can be inside it, and the
		// process is stopped only so that the write is not torn.
		err := freeze(pid, func([]thread) bool { return true }, func() error {
			for _, e := range l.entries {
				if err := m.write(m.base+uint64(e.off), l.pristine[e.off:e.off+len(e.patch)]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if counters := binary.LittleEndian.Uint64(img[l.block+offCounts:]); counters != 0 {
		return m.write(counters, make([]byte, countersSize))
	}
	return nil
}

// Reading is what coup reads back of a patched process: the setting its
// hook holds and what its reads saw.
type Reading struct {
	// Patched is false when the process's vDSO is as the kernel made it.
	Patched bool
	// Counted is false when the process had no room for the counters:
	// its reads are not known.
	Counted             bool
	Realtime, Monotonic Reads
}

// Read reads back what a process's clocks have read since it was patched.
func Read(pid int) (Reading, error) {
	l, err := machineLayout()
	if err != nil {
		return Reading{}, err
	}
	m, err := openMem(pid)
	if err != nil {
		return Reading{}, err
	}
	defer m.close()
	img, err := m.read(m.base, m.size)
	if err != nil {
		return Reading{}, err
	}
	hooked, block, err := l.state(img)
	if err != nil || !block {
		return Reading{}, err
	}
	r := Reading{Patched: hooked}
	at := binary.LittleEndian.Uint64(img[l.block+offCounts:])
	if at == 0 {
		return r, nil
	}
	// The counters are written by every thread that reads a clock; a
	// read taken while the count stays put is whole.
	for range 8 {
		b, err := m.read(at, countersSize)
		if err != nil {
			return Reading{}, err
		}
		again, err := m.read(at, countersSize)
		if err != nil {
			return Reading{}, err
		}
		r.Realtime, r.Monotonic = decodeReads(b)
		rt2, mono2 := decodeReads(again)
		if rt2.Count == r.Realtime.Count && mono2.Count == r.Monotonic.Count {
			break
		}
	}
	r.Counted = true
	return r, nil
}

// stackScan is how much of the top of a stopped thread's stack is read
// for a signal frame: its saved registers, and an x86 extended state of a
// few kilobytes below them.
const stackScan = 16 << 10

// stackHolds reports whether a word in the top stackScan bytes of a stack
// satisfies in. A stack shorter than that is read to its end.
func stackHolds(m *mem, sp uint64, in func(uint64) bool) bool {
	for n := stackScan; n >= 512; n /= 4 {
		b, err := m.read(sp, n)
		if err != nil {
			continue
		}
		for i := 0; i+8 <= len(b); i += 8 {
			if in(binary.LittleEndian.Uint64(b[i:])) {
				return true
			}
		}
		return false
	}
	return false
}

// state compares a process's vDSO with the pristine image: hooked when
// the jumps are in, block when the hook's block is there (in use, or left
// by a reset), an error when it differs elsewhere (another kernel's
// image, or someone else's patch).
func (l *layout) state(img []byte) (hooked, block bool, err error) {
	if len(img) != len(l.pristine) {
		return false, false, fmt.Errorf("its vDSO is %d bytes, not the %d of coup's own", len(img), len(l.pristine))
	}
	block = bytes.Equal(img[l.block:l.block+8], l.code[:8])
	skip := func(i int) bool {
		if i >= l.block && i < l.block+len(l.code) {
			return true
		}
		for _, e := range l.entries {
			if i >= e.off && i < e.off+len(e.patch) {
				return true
			}
		}
		return false
	}
	for i := range img {
		if img[i] != l.pristine[i] && !skip(i) {
			return false, false, fmt.Errorf("its vDSO differs from coup's own at %#x: someone else has changed it", i)
		}
	}
	if block && !bytes.Equal(img[l.block+offTramp:l.block+len(l.code)], l.code[offTramp:]) {
		return false, false, fmt.Errorf("its vDSO's tail holds a hook that is not coup's")
	}
	n := 0
	for _, e := range l.entries {
		have := img[e.off : e.off+len(e.patch)]
		switch {
		case bytes.Equal(have, e.patch):
			n++
		case !bytes.Equal(have, l.pristine[e.off:e.off+len(e.patch)]):
			return false, false, fmt.Errorf("its vDSO's %s is neither the kernel's nor coup's", e.sym)
		}
	}
	if n > 0 && (n < len(l.entries) || !block) {
		return false, false, fmt.Errorf("its vDSO is half patched")
	}
	return n > 0, block, nil
}
