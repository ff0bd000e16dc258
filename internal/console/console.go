package console

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with every character that could move the cursor,
// start a terminal escape sequence, reorder text or break a line written
// as a visible escape: "\n", "\r", "\t", "\x1b", "\u202e". A node chooses
// the explanations' quotes of its reports, its message types and more; on
// the console and in the JUnit file they must not forge a line such as
// "valid=true, as expected". Bytes that are not UTF-8 are written "\xff".
// Backslashes are kept as they are: the result is for reading, not for
// decoding back.
func Printable(s string) string {
	if isPrintable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return isPrintableSlow(s)
		}
	}
	return true
}

func isPrintableSlow(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unsafeRune(r) {
			return false
		}
	}
	return true
}

// unsafeRune reports whether r is a control character (C0, DEL, C1), a
// format character (bidirectional overrides and isolates, zero-width
// characters), a line or paragraph separator, or a noncharacter that XML
// refuses (U+FFFE, U+FFFF).
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == 0xFFFE || r == 0xFFFF
}

// PrintableLines is Printable line by line: the newlines of a message of
// several lines stay, every other control character is escaped.
func PrintableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

// Plural says "1 copy" or "3 copies".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
