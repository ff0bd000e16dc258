package servers

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
)

// Ready on observed state: once every host's processes accept
// connections (the run's zero), the cluster is watched as it forms, by
// the same log lines and polls that give its leader reports. The first
// moment a node is seen to lead and every other node to follow it, the
// cluster is ready: the history records a ready event there, whatever
// the scenario waits for, so that the verdict can say when a fault began
// before it. Start waits for what ready_state asks ("leader" or
// "followers") within ready_timeout, and fails the run with what was
// seen when it does not come.

// watchReady notes the first leader, and the first moment every other
// node follows it (called under o.mu, after each recorded report).
func (o *observer) watchReady() {
	select {
	case <-o.clusterSeen:
		return // seen already: the ready event is recorded once
	default:
	}
	if _, ok := o.leading(); !ok {
		return
	}
	select {
	case <-o.leaderSeen:
	default:
		close(o.leaderSeen)
	}
	leader, ok := o.settled()
	if !ok {
		return
	}
	b := o.nodes[leader]
	close(o.clusterSeen)
	o.r.observed(history.Event{Kind: history.KindReady, Value: leader, Term: b.term, Detail: o.describe()})
}

// settled is the leader when a node is seen to lead and every other
// node, up, to follow it (under o.mu): the cluster is ready, or, between
// a Session's episodes, has recovered.
func (o *observer) settled() (string, bool) {
	leader, ok := o.leading()
	if !ok {
		return "", false
	}
	for _, n := range o.order {
		if b := o.nodes[n]; !b.up || !b.recorded || b.leader != leader {
			return "", false
		}
	}
	return leader, true
}

// leading is a node that is up and believes it leads (the first, in
// order, when two do).
func (o *observer) leading() (string, bool) {
	for _, n := range o.order {
		if b := o.nodes[n]; b.up && b.recorded && b.leader == n {
			return n, true
		}
	}
	return "", false
}

// describe says what each node was last seen to believe (under o.mu):
// "n1 leads (term 2); n2 follows n1; n3: nothing seen yet".
func (o *observer) describe() string {
	var parts []string
	for _, n := range o.order {
		b := o.nodes[n]
		term := ""
		if b.term != nil {
			term = fmt.Sprintf(" (term %d)", *b.term)
		}
		switch {
		case !b.up:
			parts = append(parts, n+" is down")
		case !b.recorded:
			parts = append(parts, n+": nothing seen yet")
		case b.leader == n:
			parts = append(parts, n+" leads"+term)
		case b.leader == "":
			parts = append(parts, n+" follows no leader"+term)
		default:
			parts = append(parts, n+" follows "+b.leader+term)
		}
	}
	return strings.Join(parts, "; ")
}

// readyWhat says what a ready state waits for, for messages.
func readyWhat(state string) string {
	if state == scenario.ReadyLeader {
		return "a node seen to lead"
	}
	return "a node seen to lead and every other to follow it"
}

// awaitReady waits until the cluster reaches the scenario's ready state,
// a host exits, the ready timeout passes, or ctx ends.
func (r *run) awaitReady(ctx context.Context) error {
	var seen <-chan struct{}
	switch r.sv.ReadyState {
	case scenario.ReadyLeader:
		seen = r.obs.leaderSeen
	case scenario.ReadyFollowers:
		seen = r.obs.clusterSeen
	default:
		return nil
	}
	what := readyWhat(r.sv.ReadyState)
	r.logf("waiting for the cluster to be ready (%s), for up to %s", what, r.sv.ReadyTimeout.D)
	timeout := time.NewTimer(r.sv.ReadyTimeout.D)
	defer timeout.Stop()
	for {
		select {
		case <-seen:
			r.obs.mu.Lock()
			state := r.obs.describe()
			r.obs.mu.Unlock()
			r.progress("cluster ready: %s", console.Printable(state))
			return nil
		case <-r.down:
			for _, s := range r.servers {
				if !s.host.Up() {
					return fmt.Errorf("%w: %s exited before the cluster was ready (%s)%s%s", lifecycle.ErrNodeStart, s.id, what,
						console.LogTail(filepath.Join(r.dir, s.id+".log")), r.startNote())
				}
			}
		case <-timeout.C:
			r.obs.mu.Lock()
			state := r.obs.describe()
			r.obs.mu.Unlock()
			return fmt.Errorf("%w: the cluster was not ready within ready_timeout %s (ready_state %q: %s): %s%s%s",
				lifecycle.ErrNodeStart, r.sv.ReadyTimeout.D, r.sv.ReadyState, what, state, r.unseenTails(), r.startNote())
		case <-ctx.Done():
			return lifecycle.ErrInterrupted
		}
	}
}

// startNote says, for a start that failed, what the proxies could not
// attribute meanwhile: "; meanwhile 18 connections could not be
// attributed to a node, and were reset (the last: …)". A server whose
// peers' connections are all reset never forms its cluster.
func (r *run) startNote() string {
	n := r.stats.counts()[history.CountLinkUnattributed]
	if n == 0 {
		return ""
	}
	last := ""
	if d := r.unattributed.Load(); d != nil {
		last = " (the last: " + console.Printable(*d) + ")"
	}
	return fmt.Sprintf("; meanwhile %s could not be attributed to a node, and %s reset%s: links = \"process\" finds a dialler by its socket among the hosts' processes (the processes of each host's process group, with isolation \"group\"), and one that is in none is reset (see harness.log)",
		console.Plural(int(n), "connection", "connections"), map[bool]string{true: "was", false: "were"}[n == 1], last)
}

// unseenTails are the ends of the logs of the nodes that were up and of
// which nothing was seen, for a cluster that was not ready: what they
// said instead.
func (r *run) unseenTails() string {
	r.obs.mu.Lock()
	var unseen []string
	for _, n := range r.obs.order {
		if b := r.obs.nodes[n]; b.up && !b.recorded {
			unseen = append(unseen, n)
		}
	}
	r.obs.mu.Unlock()
	var out strings.Builder
	for _, n := range unseen {
		out.WriteString(strings.Replace(console.LogTail(filepath.Join(r.dir, n+".log")), "its log", n+"'s log", 1))
	}
	return out.String()
}

// hostDown is told that a host went down on its own.
func (r *run) hostDown() {
	select {
	case r.down <- struct{}{}:
	default:
	}
}
