package clockfault

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// jmpLen is the length of the jump (e9 rel32) that coup writes at the
// entry of each vDSO function it hooks.
const jmpLen = 5

// hooked names the vDSO functions coup hooks, and where each one's hook
// is in the block. clock_gettime is called on through the trampoline;
// the other two are answered by the hooks alone.
var hooked = []struct {
	sym  string
	hook int
}{
	{"__vdso_clock_gettime", offClockGettime},
	{"__vdso_gettimeofday", offGettimeofday},
	{"__vdso_time", offTime},
}

// entry is one hooked function of a vDSO: where it begins, how many of
// its first bytes coup replaces, and what it writes there.
type entry struct {
	sym   string
	off   int    // in the image
	keep  int    // how many bytes of whole instructions the jump covers
	patch []byte // the jump to its hook
}

// layout is how coup patches a vDSO image: the same for every process of
// a machine, since they all map the kernel's one image. It is planned
// once, from a vDSO no one has patched (coup's own), and checked against
// each process's before it is patched.
type layout struct {
	pristine []byte // the image unpatched
	entries  []entry
	block    int    // where the hook's block goes: the unused tail of the image's last page
	code     []byte // the block as written, trampoline included, parameters zero
}

// planLayout plans the patch of a pristine vDSO image, or says why this
// kernel's vDSO cannot be patched.
func planLayout(img []byte) (*layout, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("the vDSO is not an ELF image: %w", err)
	}
	if f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("the vDSO is for %s, and coup's clock hook is x86-64 code", f.Machine)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("the vDSO's symbols: %w", err)
	}
	l := &layout{pristine: append([]byte(nil), img...)}
	end, err := imageEnd(f, img)
	if err != nil {
		return nil, err
	}
	l.block = (end + 63) &^ 63
	if l.block+len(hookCode) > len(img) {
		return nil, fmt.Errorf("the vDSO has %d unused bytes at its end, and coup's clock hook needs %d", len(img)-end, len(hookCode))
	}
	for _, b := range img[end:] {
		if b != 0 {
			return nil, fmt.Errorf("the vDSO's tail past its ELF image is not empty")
		}
	}
	l.code = append([]byte(nil), hookCode...)
	for _, h := range hooked {
		s, ok := findSym(syms, h.sym)
		if !ok {
			return nil, fmt.Errorf("the vDSO has no %s", h.sym)
		}
		off, size := int(s.Value), int(s.Size)
		if off < 0 || size < jmpLen || off+size > end {
			return nil, fmt.Errorf("the vDSO's %s lies outside its image", h.sym)
		}
		keep := jmpLen
		if h.hook == offClockGettime {
			// The hook calls the real clock_gettime: its first
			// instructions, moved to the trampoline, then a jump back.
			tramp, n, err := relocate(img, off, l.block+offTramp)
			if err != nil {
				return nil, fmt.Errorf("the vDSO's %s: %w", h.sym, err)
			}
			copy(l.code[offTramp:offTramp+trampSize], tramp)
			keep = n
		}
		if err := noBranchInto(img[off:off+size], off, keep); err != nil {
			return nil, fmt.Errorf("the vDSO's %s: %w", h.sym, err)
		}
		l.entries = append(l.entries, entry{sym: h.sym, off: off, keep: keep, patch: jmp(off, l.block+h.hook)})
	}
	return l, nil
}

func findSym(syms []elf.Symbol, name string) (elf.Symbol, bool) {
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s, true
		}
	}
	return elf.Symbol{}, false
}

// imageEnd is where the ELF image ends in the mapping: past it, up to the
// end of the last page, nothing is used.
func imageEnd(f *elf.File, img []byte) (int, error) {
	end := 0
	for _, p := range f.Progs {
		end = max(end, int(p.Off+p.Filesz))
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS {
			end = max(end, int(s.Offset+s.FileSize))
		}
	}
	// The section headers come last; debug/elf does not say where they
	// are, so they are read from the ELF64 header (e_shoff, e_shentsize,
	// e_shnum).
	if len(img) >= 0x40 {
		shoff := binary.LittleEndian.Uint64(img[0x28:])
		shsize := uint64(binary.LittleEndian.Uint16(img[0x3a:])) * uint64(binary.LittleEndian.Uint16(img[0x3c:]))
		if shoff+shsize > uint64(len(img)) {
			return 0, fmt.Errorf("the vDSO's section headers lie past its mapping")
		}
		end = max(end, int(shoff+shsize))
	}
	if end > len(img) {
		return 0, fmt.Errorf("the vDSO's ELF image (%d bytes) is longer than its mapping (%d)", end, len(img))
	}
	return end, nil
}

// jmp encodes a jump from the instruction at from to the address to, both
// offsets in the image.
func jmp(from, to int) []byte {
	b := []byte{0xe9, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(int32(to-(from+jmpLen))))
	return b
}

// relocate copies the whole instructions that begin the function at off
// until they cover a jump, to run at at, and appends a jump back to the
// first instruction left in place. It returns the trampoline and how many
// bytes it moved. An instruction that branches, or refers to memory
// through the instruction pointer with less than 32 bits, cannot move.
func relocate(img []byte, off, at int) ([]byte, int, error) {
	var out []byte
	n := 0
	for n < jmpLen {
		inst, err := x86asm.Decode(img[off+n:], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("its first instructions do not decode: %w", err)
		}
		if isBranch(inst) {
			return nil, 0, fmt.Errorf("it begins with a branch (%v), which coup cannot move", inst)
		}
		b := append([]byte(nil), img[off+n:off+n+inst.Len]...)
		if inst.PCRel > 0 {
			if inst.PCRel != 4 {
				return nil, 0, fmt.Errorf("it begins with %v, whose %d-byte relative address coup cannot move", inst, inst.PCRel)
			}
			d := int32(binary.LittleEndian.Uint32(b[inst.PCRelOff:]))
			// The address is relative to the instruction's end, which
			// moves from off+n+len to at+len(out)+len.
			d += int32((off + n) - (at + len(out)))
			binary.LittleEndian.PutUint32(b[inst.PCRelOff:], uint32(d))
		}
		out = append(out, b...)
		n += inst.Len
	}
	out = append(out, jmp(at+len(out), off+n)...)
	if len(out) > trampSize {
		return nil, 0, fmt.Errorf("its first instructions take %d bytes, more than the trampoline's %d", len(out), trampSize)
	}
	return out, n, nil
}

func isBranch(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.JMP, x86asm.CALL, x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.SYSCALL, x86asm.SYSENTER, x86asm.INT, x86asm.UD2:
		return true
	}
	for _, a := range inst.Args {
		if _, ok := a.(x86asm.Rel); ok {
			return true
		}
	}
	return false
}

// noBranchInto decodes a function (its bytes fn, at off in the image) and
// makes sure that no branch of it lands inside its first keep bytes, past
// the first: those bytes are overwritten, and a thread already inside the
// function must never jump back into them.
func noBranchInto(fn []byte, off, keep int) error {
	for i := 0; i < len(fn); {
		inst, err := x86asm.Decode(fn[i:], 64)
		if err != nil {
			// Padding at the end of a function may not decode; what
			// precedes it did.
			if allPadding(fn[i:]) {
				return nil
			}
			return fmt.Errorf("its code does not decode at +%#x: %w", i, err)
		}
		for _, a := range inst.Args {
			if r, ok := a.(x86asm.Rel); ok {
				t := i + inst.Len + int(r)
				if t > 0 && t < keep {
					return fmt.Errorf("a branch at +%#x lands at +%#x, inside the %d bytes coup overwrites", i, t, keep)
				}
			}
		}
		i += inst.Len
	}
	return nil
}

func allPadding(b []byte) bool {
	for _, c := range b {
		if c != 0xcc && c != 0x90 && c != 0 {
			return false
		}
	}
	return true
}
