package explore

import (
	"regexp"
	"strings"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/verdict"
)

// Signature is how a run failed, in a form that two runs failing the same
// way share: the check that found the violation and the kind of violation
// it found, for every check that was not as expected, joined with " + " in
// the order the checks ran. It is "" for a run as expected.
//
// The kind is the headline of the check's explanation (up to its first
// colon or semicolon) with what differs from one run of the same failure to
// the next taken out: node names, times, durations, counts and asides in
// parentheses. So "n5 and n4 both believed they were the leader from 0.309s
// to 0.310s (819µs)" and "n4 and n3 both believed they were the leader at
// 0.120s, for 60µs" are both "two-leaders: N and N both believed they were
// the leader". A check that held although the scenario expected it to fail
// is "CHECK: held (a violation was expected)"; one that could not decide,
// "CHECK: unknown".
//
// Shrinking keeps a run's signature; a merge of sweeps counts failures by
// it.
func Signature(res *verdict.Results) string {
	if res == nil {
		return ""
	}
	mustFail := map[string]bool{}
	for _, v := range res.Expected.Violations {
		mustFail[v] = true
	}
	anyFailure := !res.Expected.Valid && len(mustFail) == 0
	var parts []string
	for _, name := range res.Order {
		c := res.Checks[name]
		switch {
		case c.Valid == checks.False:
			parts = append(parts, name+": "+Kind(c.Explanation))
		case c.Valid == checks.Unknown:
			parts = append(parts, name+": unknown")
		case mustFail[name]:
			parts = append(parts, name+": held (a violation was expected)")
		}
	}
	if anyFailure && res.Valid == checks.True {
		parts = append(parts, "no violation (one was expected)")
	}
	if res.Outcome == verdict.AsExpected && res.Valid != checks.False {
		return ""
	}
	return strings.Join(parts, " + ")
}

var (
	nodeName  = regexp.MustCompile(`\bn\d+\b`)
	nodeList  = regexp.MustCompile(`N(?:, N)*(?:,? and N)?`)
	timeLike  = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	number    = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?%?`)
	timeWords = regexp.MustCompile(`\b(?:from|to|at|for|since|after|until|within|by|before)\s+T\b|\bT\b`)
	spaces    = regexp.MustCompile(`\s+`)
	plural    = regexp.MustCompile(`# (\w+?)s\b`)
	verbs     = strings.NewReplacer(" is ", " are ", " was ", " were ")
)

// Kind is the kind of violation an explanation describes: its headline
// with node names, times, counts and asides taken out (see Signature).
func Kind(explanation string) string {
	s := explanation
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "; "); i >= 0 {
		s = s[:i]
	}
	s = dropParens(s)
	s = nodeName.ReplaceAllString(s, "N")
	s = nodeList.ReplaceAllString(s, "N")
	s = timeLike.ReplaceAllString(s, "T")
	s = number.ReplaceAllString(s, "#")
	s = timeWords.ReplaceAllString(s, "")
	s = plural.ReplaceAllString(s, "# $1")
	s = verbs.Replace(" " + s + " ")
	s = spaces.ReplaceAllString(s, " ")
	s = strings.ReplaceAll(s, " ,", ",")
	s = strings.ReplaceAll(s, ",,", ",")
	return strings.Trim(s, " ,.")
}

// dropParens removes every parenthesised aside, nested ones included, and
// an aside left open at the end.
func dropParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}
