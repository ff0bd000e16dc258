package checks

import (
	"fmt"

	"github.com/coupharness/coup/history"
)

// termClaim is one span during which a live node claimed leadership in one
// term, or without a term (term nil). It is a claim as two-leaders sees
// it, cut wherever the node's leader reports change the term: a node that
// reports itself leader in term 3 and then in term 4 makes two term claims.
type termClaim struct {
	claim
	term *int64
}

// termClaimsOf returns every term claim in h, in the order they began, and
// whether any leader report from a live node carries a term (without one,
// the term checks have nothing to judge).
//
// A term claim begins at a live node's leader report naming itself, and
// lasts until the node's next leader report that does not name itself
// with the same term (naming another node, none, itself in another term or
// without a term), or until the node stops being live, or until the end of
// the history. The model of liveness is the world's (see live.go): a
// paused node's claim goes on.
func termClaimsOf(h *history.History) (claims []*termClaim, termed bool) {
	w := newWorld(&h.Meta)
	open := map[string]*termClaim{}
	for i := range h.Events {
		e := &h.Events[i]
		if !affects(e) {
			continue
		}
		n := w.node(e.Node)
		if e.Kind == history.KindReport && n.live && e.Term != nil {
			termed = true
		}
		w.apply(e)
		now := n.claims()
		var term *int64
		if now {
			term = n.report.Term
		}
		c := open[n.name]
		if c != nil && (!now || !sameTerm(c.term, term)) {
			c.to, c.end = e.Time, e
			delete(open, n.name)
			c = nil
		}
		if now && c == nil {
			c = &termClaim{
				claim: claim{node: n.name, from: e.Time, at: i, begin: e, paused: n.pause, start: n.start, restart: n.restart},
				term:  term,
			}
			open[n.name] = c
			claims = append(claims, c)
		}
	}
	for _, c := range open {
		c.to = h.End()
	}
	return claims, termed
}

// sameTerm reports whether two terms are equal, no term being equal only
// to no term.
func sameTerm(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// termText names a term for a sentence: "term 3", or "no term".
func termText(t *int64) string {
	if t == nil {
		return "no term"
	}
	return fmt.Sprintf("term %d", *t)
}

// claimEnd says how a term claim ended: "n1 stepped down at 0.550s (it then
// believed in n2)", "n1 crashed at 0.200s", or "" if it still stood when
// the history ended.
func claimEnd(c *termClaim) string {
	e := c.end
	if e == nil {
		return ""
	}
	if e.Kind == history.KindReport && e.Value == c.node {
		return fmt.Sprintf("%s claimed leadership in %s at %s", c.node, termText(e.Term), fmtTime(e.Time))
	}
	return endedBy(c.node, e)
}

// endedBy says what a node's event e did to its claim: "n1 stepped down
// at 0.550s (it then believed in n2)", "the harness stopped n1 at the end
// of the run at 1.0s", "n1 crashed at 0.200s", "n1's belief became
// unknown at 0.700s (…)".
func endedBy(node string, e *history.Event) string {
	at := fmtTime(e.Time)
	switch {
	case e.Kind == history.KindReport && e.Value == "" && e.Detail == history.LeaderUnknown:
		return fmt.Sprintf("%s's belief became unknown at %s (a poll failed or timed out, so its claim was cut short there)", node, at)
	case e.Kind == history.KindReport && e.Value == "":
		return fmt.Sprintf("%s stepped down at %s (it then believed in no leader)", node, at)
	case e.Kind == history.KindReport:
		return fmt.Sprintf("%s stepped down at %s (it then believed in %s)", node, at, e.Value)
	case e.What == history.ProcStop:
		return fmt.Sprintf("the harness stopped %s at the end of the run at %s", node, at)
	case e.What == history.ProcStart:
		return fmt.Sprintf("%s was started again at %s", node, at)
	}
	return fmt.Sprintf("%s %s at %s", node, downWord(e), at)
}

// noTerms is the explanation of a term check on a history without terms:
// why there are none, and what would give some, in the words of the
// nodes that ran (protocol nodes send their reports; coup observes a real
// server's).
func noTerms(h *history.History) string {
	reported := false
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == history.KindReport && e.What == history.ReportLeader {
			reported = true
			break
		}
	}
	switch {
	case !reported && h.Meta.Servers:
		return "coup observed no server's belief of the leader, so there is nothing to judge (a run that ends before the servers' first election observes none)"
	case !reported:
		return "no node reported a leader, so there is nothing to judge"
	case h.Meta.Servers:
		return "no leader report carries a term, so there is nothing to judge: coup reads a server's term from a \"term\" group of its log patterns ([[server.log]]) or polls ([[server.poll]]); see docs/servers.md"
	}
	return "no leader report carries a term, so there is nothing to judge: a node names the term of its leadership in its leader reports (\"term\": 3; see docs/protocol.md), and built-in algorithms without terms give none"
}

// claimFigures sets the figures both term checks give: the claims with a
// term, and those without (when there are any). It returns the two counts.
func claimFigures(r *Result, claims []*termClaim) (termed, untermed int) {
	for _, c := range claims {
		if c.term == nil {
			untermed++
		} else {
			termed++
		}
	}
	r.figure("claims", termed)
	if untermed > 0 {
		r.figure("claims_without_term", untermed)
	}
	return termed, untermed
}

// unjudgedText says how many claims without a term were left out, or "".
func unjudgedText(untermed int) string {
	if untermed == 0 {
		return ""
	}
	return fmt.Sprintf("; %s without a term could not be judged", plural(untermed, "claim"))
}
