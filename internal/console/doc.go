// Package console makes text safe and plain for a person's terminal and
// files meant for reading: Printable writes every character that could
// move the cursor, start an escape sequence or reorder text as a visible
// escape, so that what a node wrote can never forge a line of coup's own;
// Plural says "1 copy" or "3 copies". Status keeps a long command's
// progress line below what it prints, on a terminal.
package console
