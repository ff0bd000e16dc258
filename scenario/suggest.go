package scenario

import (
	"fmt"
	"strings"
)

// Suggest returns the known word closest to word, when it is close enough
// to be a likely misspelling, and "" otherwise. Closeness is the optimal
// string alignment distance (insertions, deletions, substitutions and
// swaps of two neighbours, each costing one), ignoring case; a word of up
// to four letters may be one edit away, up to eight letters two, longer
// words three. A word that is known is returned as is. On a tie, the
// earlier of known wins.
func Suggest(word string, known []string) string {
	w := strings.ToLower(word)
	limit := 3
	switch n := len([]rune(w)); {
	case n == 0:
		return ""
	case n <= 4:
		limit = 1
	case n <= 8:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, k := range known {
		d := editDistance(w, strings.ToLower(k))
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// DidYouMean is ` (did you mean "x"?)` when Suggest finds x for word, and ""
// otherwise: the tail of an error message.
func DidYouMean(word string, known []string) string {
	if s := Suggest(word, known); s != "" && s != word {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// unknownMsg is the message for a value that is none of the known ones:
// `unknown what "got" (did you mean "x"?; known: a, b)`.
func unknownMsg(what, got string, known []string) string {
	list := strings.Join(known, ", ")
	if s := Suggest(got, known); s != "" && s != got {
		return fmt.Sprintf("unknown %s %q (did you mean %q? known: %s)", what, got, s, list)
	}
	return fmt.Sprintf("unknown %s %q (known: %s)", what, got, list)
}

// editDistance is the optimal string alignment distance between a and b,
// counted in runes.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// Three rows: the one before the previous (for swaps), the previous and
	// the current.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
