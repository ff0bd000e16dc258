package console

import (
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ümlauts and 日本", "plain text, ümlauts and 日本"},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"\x00\x7f\u0085", `\x00\x7f\u0085`},
		{"bidi \u202e and zero\u200bwidth", `bidi \u202e and zero\u200bwidth`},
		{"bad \xff byte", `bad \xff byte`},
		{"\ufffe\uffff", `\ufffe\uffff`},
		{`back\slash`, `back\slash`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("\x1b[2Kvalid=true\r\n")
	f.Add("\xff\xfe\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		for _, r := range p {
			if unsafeRune(r) || r == 0xFFFD && !strings.ContainsRune(s, 0xFFFD) {
				t.Fatalf("Printable(%q) = %q keeps %U", s, p, r)
			}
		}
		if isPrintable(s) && p != s {
			t.Fatalf("Printable changed printable %q to %q", s, p)
		}
	})
}
