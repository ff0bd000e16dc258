package scenario

import "syscall"

// How many nodes a driver can start. The pipe driver and the simulator
// take up to MaxNodes (the pipe driver holds about five files per node
// process: 1000 nodes fit any open-file limit above about 5100). Real
// servers are bounded twice over, by the addresses of coup's loopback
// layout (MaxServers) and by the files coup holds open for them
// (serverFiles), which this process's open-file limit bounds.
const (
	// MaxServers is the most servers of one run: coup's loopback layout
	// gives server i its own address, 127.0.i.x, and the link from i to j
	// its own, 127.i.j.x, with i and j from 1 to 254 (servers/layout.go).
	MaxServers = 254

	// runFiles are the files coup holds open for a run, whatever its
	// size: its history and log, the terminal, the reaper's pipe, the
	// runtime's own (measured: about 15; this leaves room).
	runFiles = 32
	// serverFiles are those it holds for each server: its log, its
	// stdout and stderr pipes, its process, a poll's connection (measured:
	// about 4).
	serverFiles = 6
	// clientFiles are those it holds for each client: a connection to a
	// server, and, for a client that is a process of its own, its log, its
	// pipes and its process.
	clientFiles, clientProcessFiles = 1, 6
	// LinkConnections is the room a run leaves for the connections open
	// at once between each ordered pair of servers, each of which holds
	// two files in coup's proxy (the one accepted and the one dialled).
	// etcd holds four (two raft streams, a pipeline, a prober: measured
	// with 3, 5 and 10 members); ZooKeeper and the example TCP service
	// about one.
	LinkConnections = 4
)

// openFileLimit is how many files this process may hold open (its
// RLIMIT_NOFILE, which Go raises to the hard limit as a program starts),
// or 0 when it is not known. Tests replace it.
var openFileLimit = func() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}

// serverFiles is about how many files coup holds open at once in a run
// of n of the scenario's servers: its own, each server's and each of its
// sidecars' (as many as a server's), a listening
// proxy for each peer port of each server (of each ordered pair, with
// address links), room for LinkConnections on each ordered pair, and
// each client's.
func (s *Scenario) serverFiles(n int) int {
	sv := s.Server
	listeners := n * len(sv.Peer)
	if sv.Links != LinksProcess {
		listeners *= n - 1
	}
	clients := s.Workload.Clients * clientFiles
	if sv.ClientsAreProcesses() {
		clients += s.Workload.Clients * clientProcessFiles
	}
	processes := n * (1 + len(sv.Sidecars))
	return runFiles + processes*serverFiles + listeners + 2*LinkConnections*n*(n-1) + clients
}

// validateServerCount refuses more servers than the loopback layout has
// addresses for, or than the files coup would hold for them allow.
func (s *Scenario) validateServerCount() error {
	if s.Server == nil {
		return nil
	}
	most, limit := s.maxServers()
	switch {
	case s.Nodes > MaxServers && limit > 0:
		return s.errorf("nodes", "at most %d servers fit coup's loopback layout (127.i.j.x, i and j from 1 to %d), got %d; and this machine's open-file limit (ulimit -n: %d) fits at most %d",
			MaxServers, MaxServers, s.Nodes, limit, most)
	case s.Nodes > MaxServers:
		return s.errorf("nodes", "at most %d servers fit coup's loopback layout (127.i.j.x, i and j from 1 to %d), got %d", MaxServers, MaxServers, s.Nodes)
	case s.Nodes > most:
		what := "per server"
		if s.Server.Links != LinksProcess {
			what = "per ordered pair of servers"
		}
		return s.errorf("nodes", "at most %d servers fit this machine's open-file limit (ulimit -n: %d), got %d: coup would hold about %d files open at once (a listening proxy %s and peer port, and two for each of up to %d connections between each ordered pair); run fewer, or raise the limit (ulimit -Hn, as root)",
			most, limit, s.Nodes, s.serverFiles(s.Nodes), what, LinkConnections)
	}
	return nil
}

// maxServers is the most servers a run of the scenario may have on this
// machine, and the open-file limit when it is what bounds them (0 when it
// is the loopback layout).
func (s *Scenario) maxServers() (most, limit int) {
	limit = openFileLimit()
	if limit <= 0 || s.serverFiles(MaxServers) <= limit {
		return MaxServers, 0
	}
	for most < MaxServers && s.serverFiles(most+1) <= limit {
		most++
	}
	return most, limit
}
