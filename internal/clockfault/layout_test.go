package clockfault

import (
	"bytes"
	"debug/elf"
	"strings"
	"testing"
)

// TestLayoutRefuses: a vDSO coup cannot hook is refused with the reason,
// before any process is touched.
func TestLayoutRefuses(t *testing.T) {
	l, err := machineLayout()
	if err != nil {
		t.Skipf("no layout here: %v", err)
	}
	img := l.pristine
	f, _ := elf.NewFile(bytes.NewReader(img))
	syms, _ := f.DynamicSymbols()
	cg, _ := findSym(syms, "__vdso_clock_gettime")
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"a branch first", func(b []byte) []byte {
			copy(b[cg.Value:], []byte{0xeb, 0x00}) // jmp +0
			return b
		}, "begins with a branch"},
		{"no room at the end", func(b []byte) []byte {
			for i := l.block; i < len(b); i++ {
				b[i] = 0x90
			}
			return b
		}, "not empty"},
		{"not ELF", func(b []byte) []byte { b[0] = 0; return b }, "not an ELF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planLayout(c.edit(append([]byte(nil), img...)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error that says %q", err, c.want)
			}
		})
	}
	if _, err := planLayout(append([]byte(nil), img...)); err != nil {
		t.Fatalf("the pristine image: %v", err)
	}
}

func TestSettingAt(t *testing.T) {
	s := Setting{Skew: Skew{Offset: 5, Rate: 1.5, Monotonic: true}, MonotonicAt: 1000, RealtimeAt: 7}
	if got := s.At(3000, false); got != 1000+3000+5 {
		t.Errorf("monotonic at 3000: got %d, want %d", got, 1000+3000+5)
	}
	if got := s.At(3000, true); got != 3000 {
		t.Errorf("realtime untouched: got %d, want 3000", got)
	}
}
