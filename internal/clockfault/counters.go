package clockfault

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

// countersSize is the hook's read counters: for realtime then monotonic,
// how many reads, the true time of the last and the skew it saw.
const countersSize = 48

// countersAt finds room for the read counters in a process: the end of
// the page that holds the end of its executable's data (its .bss), which
// the executable does not use and nothing else is mapped over. The hook
// writes there, so that coup can read back what the process's clocks
// read. It returns 0 when there is no room (the data ends within
// countersSize bytes of a page's end), and the clock is then checked by
// its patch alone.
func countersAt(pid int) (uint64, error) {
	f, err := elf.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: its executable: %w", pid, err)
	}
	defer f.Close()
	phdr, err := auxv(pid, 3) // AT_PHDR: where its program headers are
	if err != nil {
		return 0, err
	}
	var phVaddr uint64
	found := false
	for _, p := range f.Progs {
		if p.Type == elf.PT_PHDR {
			phVaddr, found = p.Vaddr, true
		}
	}
	if !found {
		// No PT_PHDR: the headers are at e_phoff in the first segment.
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Off == 0 {
				phVaddr, found = p.Vaddr+phoff(pid), true
				break
			}
		}
	}
	if !found {
		return 0, nil
	}
	bias := phdr - phVaddr
	var end uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_W != 0 {
			end = max(end, bias+p.Vaddr+p.Memsz)
		}
	}
	if end == 0 {
		return 0, nil
	}
	page := (end + 4095) &^ 4095
	at := (page - countersSize) &^ 15
	if at < end {
		return 0, nil
	}
	if !writable(pid, at, page) {
		return 0, nil
	}
	return at, nil
}

// phoff reads the file offset of an executable's program headers
// (e_phoff, which debug/elf does not keep).
func phoff(pid int) uint64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 64
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], 0x20); err != nil {
		return 64
	}
	return binary.LittleEndian.Uint64(b[:])
}

// writable reports whether [lo, hi) lies in one writable mapping.
func writable(pid int, lo, hi uint64) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := parseRange(sc.Text())
		if !ok || lo < a || hi > b {
			continue
		}
		_, rest, _ := cutField(sc.Text())
		return len(rest) >= 2 && rest[0] == 'r' && rest[1] == 'w'
	}
	return false
}

func cutField(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// auxv reads one entry of a process's auxiliary vector.
func auxv(pid int, key uint64) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, goneOr(pid, err))
	}
	for i := 0; i+16 <= len(b); i += 16 {
		k, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
		if k == key {
			return v, nil
		}
		if k == 0 {
			break
		}
	}
	return 0, fmt.Errorf("process %d: no entry %d in its auxiliary vector", pid, key)
}

// Reads is what a process's reads of one class of clocks saw, as the
// hook counted them.
type Reads struct {
	// Count is how many reads went through the hook since it was put in.
	Count int64
	// At is the true time of the last one, in nanoseconds on the class's
	// clock, and Skew what that read saw beyond the true time.
	At   int64
	Skew int64
}

func decodeReads(b []byte) (rt, mono Reads) {
	get := func(i int) Reads {
		return Reads{
			Count: int64(binary.LittleEndian.Uint64(b[i:])),
			At:    int64(binary.LittleEndian.Uint64(b[i+8:])),
			Skew:  int64(binary.LittleEndian.Uint64(b[i+16:])),
		}
	}
	return get(0), get(24)
}
