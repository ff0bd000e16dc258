package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// withOpenFileLimit runs the test with this process's open-file limit
// taken as n (0: unknown).
func withOpenFileLimit(t *testing.T, n int) {
	t.Helper()
	old := openFileLimit
	openFileLimit = func() int { return n }
	t.Cleanup(func() { openFileLimit = old })
}

// serverWith is goodServer with n nodes and the given links.
func serverWith(n int, links string) string {
	src := strings.Replace(goodServer, "nodes = 3", fmt.Sprintf("nodes = %d", n), 1)
	return strings.Replace(src, `peer = ["peer"]`, fmt.Sprintf("peer = [\"peer\"]\nlinks = %q", links), 1)
}

// nodesError parses src and returns its error, which must be about nodes,
// at nodes' line.
func nodesError(t *testing.T, src string) *Error {
	t.Helper()
	_, err := Parse("svc.toml", src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *scenario.Error about nodes", err)
	}
	if e.File != "svc.toml" || e.Field != "nodes" || e.Line != 1 {
		t.Errorf("error at %s:%d field %q, want svc.toml:1, nodes: %v", e.File, e.Line, e.Field, e)
	}
	return e
}

// Servers beyond coup's loopback layout are refused at validation, with
// the layout's bound, whatever the open-file limit; up to it they pass
// when the files fit.
func TestServersBeyondTheLayout(t *testing.T) {
	withOpenFileLimit(t, 0)
	for _, links := range []string{LinksAddress, LinksProcess} {
		if _, err := Parse("svc.toml", serverWith(MaxServers, links)); err != nil {
			t.Errorf("%s links, %d servers: %v", links, MaxServers, err)
		}
		e := nodesError(t, serverWith(MaxServers+1, links))
		if !strings.Contains(e.Msg, "at most 254 servers fit coup's loopback layout") || !strings.Contains(e.Msg, "got 255") {
			t.Errorf("%s links: %q does not give the layout's bound", links, e.Msg)
		}
	}
	// A protocol node's scenario is bounded by MaxNodes alone.
	withOpenFileLimit(t, 100)
	if _, err := Parse("ring.toml", fmt.Sprintf("algorithm = \"bully\"\nnodes = %d\n", MaxNodes)); err != nil {
		t.Errorf("%d protocol nodes: %v", MaxNodes, err)
	}
}

// Servers whose files would not fit this process's open-file limit are
// refused at the exact count where they stop fitting, with the limit,
// the count and what the files are; address links need a listening proxy
// per ordered pair, so fewer fit than with process links.
func TestServersBeyondTheOpenFileLimit(t *testing.T) {
	const limit = 2000
	withOpenFileLimit(t, limit)
	most := map[string]int{}
	for _, links := range []string{LinksAddress, LinksProcess} {
		s, err := Parse("svc.toml", serverWith(3, links))
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for s.serverFiles(n+1) <= limit {
			n++
		}
		most[links] = n
		if _, err := Parse("svc.toml", serverWith(n, links)); err != nil {
			t.Errorf("%s links, %d servers (%d files): %v", links, n, s.serverFiles(n), err)
		}
		e := nodesError(t, serverWith(n+1, links))
		for _, want := range []string{fmt.Sprintf("at most %d servers", n), "ulimit -n: 2000", fmt.Sprintf("got %d", n+1), fmt.Sprintf("about %d files", s.serverFiles(n+1))} {
			if !strings.Contains(e.Msg, want) {
				t.Errorf("%s links: %q lacks %q", links, e.Msg, want)
			}
		}
		// Beyond the layout too, both bounds are given.
		e = nodesError(t, serverWith(300, links))
		if !strings.Contains(e.Msg, "at most 254 servers fit coup's loopback layout") || !strings.Contains(e.Msg, fmt.Sprintf("fits at most %d", n)) {
			t.Errorf("%s links, 300 servers: %q", links, e.Msg)
		}
	}
	if most[LinksAddress] >= most[LinksProcess] {
		t.Errorf("at most %d servers with address links, %d with process links: address links need more files", most[LinksAddress], most[LinksProcess])
	}
	// Every listening proxy and the room for connections grow with the
	// square of the servers: what the count says is what was measured.
	s, _ := Parse("svc.toml", serverWith(3, LinksAddress))
	if got, want := s.serverFiles(3), runFiles+3*serverFiles+3*2*1+2*LinkConnections*3*2; got != want {
		t.Errorf("3 servers with address links and one peer port hold %d files, want %d", got, want)
	}
	// Client processes hold files of their own.
	withClients := serverWith(3, LinksAddress) + "\n"
	withClients = strings.Replace(withClients, "[[server.log]]", "adapter = [\"./client\"]\n\n[[server.log]]", 1)
	withClients += "[workload]\nkind = \"lin-kv\"\nclients = 10\n"
	c, err := Parse("svc.toml", withClients)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.serverFiles(3)-s.serverFiles(3), 10*(clientFiles+clientProcessFiles); got != want {
		t.Errorf("10 client processes add %d files, want %d", got, want)
	}
	// A host's sidecar holds as many as its server.
	withSidecar := strings.Replace(serverWith(3, LinksAddress), "[[server.log]]", "[[server.sidecar]]\nname = \"agent\"\ncommand = [\"./agent\"]\n\n[[server.log]]", 1)
	h, err := Parse("svc.toml", withSidecar)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.serverFiles(3)-s.serverFiles(3), 3*serverFiles; got != want {
		t.Errorf("a sidecar on each of 3 hosts adds %d files, want %d", got, want)
	}
}
