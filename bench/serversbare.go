package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
)

// etcdElected is etcd's raft line of a member that won an election: its
// own id elected leader its own id (the preset's pattern, whose report coup
// records when the leader is the member itself).
var etcdElected = regexp.MustCompile(`raft\.node: ([0-9a-f]+) elected leader ([0-9a-f]+) at term [0-9]+`)

// zkLeader is ZooKeeper's answer to srvr from a server that leads (the
// preset maps standalone to leader too).
var zkLeader = regexp.MustCompile(`Mode: (leader|standalone)`)

// bareServer is one server the bare path started.
type bareServer struct {
	p       *proc.Proc
	readers sync.WaitGroup
	exited  chan struct{}
}

// startBare starts the preset's servers directly, with the preset's
// command lines and files but every peer reached at its own address (no
// proxy), and returns the time from just before the first was started to
// the first moment one claims leadership: for etcd the "elected leader"
// line of a member naming itself, read as it is written; for ZooKeeper
// "Mode: leader" in the answer to srvr, asked every serverPoll. Every
// server is killed (its process group, by pid) before it returns.
func startBare(ctx context.Context, sc *scenario.Scenario, dir string, bound time.Duration) (time.Duration, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	nodes, err := bareLayout(sc, abs)
	if err != nil {
		return 0, err
	}
	leader := make(chan time.Duration, 1)
	claim := func() {
		select {
		case leader <- time.Since(start):
		default:
		}
	}
	var started []*bareServer
	stop := make(chan struct{})
	var polls sync.WaitGroup
	defer func() {
		close(stop)
		polls.Wait()
		for _, s := range started {
			_ = s.p.Kill()
		}
		for _, s := range started {
			s.readers.Wait()
			_, _ = s.p.Wait()
		}
	}()
	exited := make(chan string, len(nodes))
	for _, n := range nodes {
		s, err := startBareServer(sc, n, claim)
		if err != nil {
			return 0, err
		}
		started = append(started, s)
		go func() {
			<-s.exited
			exited <- n.ID
		}()
		if len(sc.Server.Poll) > 0 {
			polls.Add(1)
			go func() {
				defer polls.Done()
				pollBare(n.Addr[sc.Server.Ready.Port], stop, claim)
			}()
		}
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case d := <-leader:
		return d, nil
	case id := <-exited:
		return 0, fmt.Errorf("%s exited before a leader was elected (its log: %s)", id, filepath.Join(dir, id+".log"))
	case <-timer.C:
		return 0, fmt.Errorf("no leader within %s (logs in %s)", bound, dir)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// bareLayout picks each node's ports on its own loopback address
// (127.0.i.S, S drawn at random as coup's runs do) and lays out the
// template data with every peer at its own address.
func bareLayout(sc *scenario.Scenario, dir string) ([]*scenario.ServerNode, error) {
	var last error
	for range 20 {
		slot := 1 + rand.IntN(254)
		host := func(i int) string { return fmt.Sprintf("127.0.%d.%d", i, slot) }
		ports := map[string]int{}
		var lns []net.Listener
		last = nil
		for i := 1; i <= sc.Nodes && last == nil; i++ {
			for _, name := range sc.Server.Ports {
				ln, err := net.Listen("tcp", net.JoinHostPort(host(i), "0"))
				if err != nil {
					last = err
					break
				}
				lns = append(lns, ln)
				ports[strconv.Itoa(i)+"/"+name] = ln.Addr().(*net.TCPAddr).Port
			}
		}
		for _, ln := range lns {
			ln.Close()
		}
		if last != nil {
			continue
		}
		port := func(i int, name string) int { return ports[strconv.Itoa(i)+"/"+name] }
		link := func(_, j int) string { return host(j) }
		return scenario.ServerNodes(sc, dir, host, link, host, port), nil
	}
	return nil, fmt.Errorf("no free loopback ports: %w", last)
}

// startBareServer writes a node's files and starts it in a process group
// of its own (proc.Start: the group is killed by pid, and the server dies
// with this process), its output copied to NODE.log beside its folder and
// read for etcd's election line.
func startBareServer(sc *scenario.Scenario, n *scenario.ServerNode, claim func()) (*bareServer, error) {
	rd, err := sc.Server.Render(n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.ID, err)
	}
	if err := os.MkdirAll(n.Data, 0o755); err != nil {
		return nil, err
	}
	for name, text := range rd.Files {
		path := filepath.Join(n.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	log, err := os.Create(n.Dir + ".log")
	if err != nil {
		return nil, err
	}
	var env []string
	for k, v := range rd.Env {
		env = append(env, k+"="+v)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	p, err := proc.Start(proc.Spec{Argv: rd.Command, Env: env, Log: ew, Dir: n.Dir})
	ew.Close()
	if err != nil {
		er.Close()
		log.Close()
		return nil, fmt.Errorf("%s: %w", n.ID, err)
	}
	p.Stdin.Close()
	s := &bareServer{p: p, exited: make(chan struct{})}
	var logMu sync.Mutex
	s.readers.Add(2)
	for _, r := range []io.ReadCloser{p.Stdout, er} {
		go func() {
			defer s.readers.Done()
			defer r.Close()
			lines := bufio.NewScanner(r)
			lines.Buffer(make([]byte, 64<<10), 1<<20)
			for lines.Scan() {
				line := lines.Bytes()
				if m := etcdElected.FindSubmatch(line); m != nil && string(m[1]) == string(m[2]) {
					claim()
				}
				logMu.Lock()
				log.Write(line)
				log.Write([]byte{'\n'})
				logMu.Unlock()
			}
			_, _ = io.Copy(io.Discard, r)
		}()
	}
	go func() {
		s.readers.Wait()
		log.Close()
		close(s.exited)
	}()
	return s, nil
}

// pollBare asks a server srvr every serverPoll, each question bounded by
// serverPollTimeout, until it answers that it leads or stop closes.
func pollBare(addr string, stop <-chan struct{}, claim func()) {
	t := time.NewTicker(serverPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		c, err := net.DialTimeout("tcp", addr, serverPollTimeout)
		if err != nil {
			continue
		}
		_ = c.SetDeadline(time.Now().Add(serverPollTimeout))
		_, err = io.WriteString(c, "srvr")
		var answer []byte
		if err == nil {
			answer, _ = io.ReadAll(io.LimitReader(c, 1<<20))
		}
		c.Close()
		if zkLeader.Match(answer) {
			claim()
			return
		}
	}
}
