package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// bin is the server, and adapterBin the client adapter, built once for
// every test in this package.
var bin, adapterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tcp-leader-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "tcp-leader")
	adapterBin = filepath.Join(dir, "adapter")
	for _, b := range [][2]string{{bin, "."}, {adapterBin, "./adapter"}} {
		out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", b[1], err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const waitLimit = 10 * time.Second

// logBuffer collects a process's stderr.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type proc struct {
	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
}

type cluster struct {
	t       *testing.T
	ids     []string
	listen  map[string]string
	status  map[string]string
	client  map[string]string
	procs   map[string]*proc
	timeout string
	lease   string // --lease, when set
}

// newCluster picks addresses for n nodes on 127.0.X.i, with X random and
// every port one the kernel just handed out, so that tests running at
// once do not collide.
func newCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t, listen: map[string]string{}, status: map[string]string{}, client: map[string]string{}, procs: map[string]*proc{}, timeout: "150ms"}
	octet := 1 + rand.IntN(254)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	free := func(host string) string {
		l, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Skipf("cannot listen on %s (this test needs all of 127.0.0.0/8 on loopback): %v", host, err)
		}
		held = append(held, l)
		return l.Addr().String()
	}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		host := fmt.Sprintf("127.0.%d.%d", octet, i)
		c.ids = append(c.ids, id)
		c.listen[id], c.status[id], c.client[id] = free(host), free(host), free(host)
	}
	return c
}

// start runs node id on the data directory dir.
func (c *cluster) start(id, dir string) *proc {
	c.t.Helper()
	args := []string{"--id", id, "--listen", c.listen[id], "--status", c.status[id], "--client", c.client[id], "--data", dir, "--election-timeout", c.timeout}
	if c.lease != "" {
		args = append(args, "--lease", c.lease)
	}
	for _, p := range c.ids {
		if p != id {
			args = append(args, "--peer", p+"="+c.listen[p])
		}
	}
	p := &proc{cmd: exec.Command(bin, args...), log: &logBuffer{}, done: make(chan struct{})}
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	c.t.Cleanup(func() {
		p.cmd.Process.Kill() // by pid; an error means it is gone already
		<-p.done
		if c.t.Failed() {
			c.t.Logf("stderr of %s (pid %d):\n%s", id, p.cmd.Process.Pid, p.log)
		}
	})
	c.procs[id] = p
	return p
}

// kill SIGKILLs node id by its pid and waits for it to be gone.
func (c *cluster) kill(id string) {
	c.t.Helper()
	p := c.procs[id]
	if err := p.cmd.Process.Kill(); err != nil {
		c.t.Fatal(err)
	}
	<-p.done
	delete(c.procs, id)
}

var client = &http.Client{Timeout: 200 * time.Millisecond}

func (c *cluster) statusOf(id string) (status, error) {
	var s status
	resp, err := client.Get("http://" + c.status[id] + "/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, errors.New(resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// settled polls the running nodes until they agree: one leader, in a term
// above after, and every other node following it in that term.
func (c *cluster) settled(after int64) status {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	var last []status
	for time.Now().Before(deadline) {
		last = last[:0]
		for id := range c.procs {
			if s, err := c.statusOf(id); err == nil {
				last = append(last, s)
			}
		}
		if len(last) == len(c.procs) {
			var lead []status
			for _, s := range last {
				if s.Role == leader {
					lead = append(lead, s)
				}
			}
			ok := len(lead) == 1 && lead[0].Term > after && lead[0].Leader == lead[0].ID
			for _, s := range last {
				ok = ok && s.Term == lead[0].Term && s.Leader == lead[0].ID &&
					(s.Role == follower || s.ID == lead[0].ID)
			}
			if ok {
				return lead[0]
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no single leader above term %d within %v; last statuses %+v", after, waitLimit, last)
	return status{}
}

// logged waits for node id's stderr to hold line.
func (c *cluster) logged(id, line string) {
	c.t.Helper()
	p := c.procs[id]
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if strings.Contains("\n"+p.log.String(), "\n"+line+"\n") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("%s never logged %q", id, line)
}

// checkLogs checks that every running node logged the belief st.
func (c *cluster) checkLogs(st status) {
	c.t.Helper()
	for id := range c.procs {
		if id == st.Leader {
			c.logged(id, fmt.Sprintf("%s became leader at term %d", id, st.Term))
		} else {
			c.logged(id, fmt.Sprintf("%s follows %s at term %d", id, st.Leader, st.Term))
		}
	}
}

var startLine = regexp.MustCompile(`(?m)^(\S+) starting at term (\d+):`)

// startTerm waits for node id's startup line and returns its term.
func (c *cluster) startTerm(id string) int64 {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if m := startLine.FindStringSubmatch(c.procs[id].log.String()); m != nil {
			if m[1] != id {
				c.t.Fatalf("startup line names %s, not %s", m[1], id)
			}
			t, _ := strconv.ParseInt(m[2], 10, 64)
			return t
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("%s never logged its startup line", id)
	return 0
}

func TestElection(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	data := map[string]string{}
	for _, id := range c.ids {
		data[id] = t.TempDir()
		c.start(id, data[id])
	}
	first := c.settled(0)
	c.checkLogs(first)
	t.Logf("%s leads term %d", first.Leader, first.Term)

	// Kill the leader: the other two elect one of them in a higher term.
	old := first.Leader
	c.kill(old)
	second := c.settled(first.Term)
	if second.Leader == old {
		t.Fatalf("%s still leads after it was killed", old)
	}
	c.checkLogs(second)
	t.Logf("%s leads term %d", second.Leader, second.Term)

	// Restart the old leader on its data: it keeps its term, and follows.
	c.start(old, data[old])
	if got := c.startTerm(old); got < first.Term {
		t.Fatalf("%s restarted at term %d, below the term %d it led", old, got, first.Term)
	}
	third := c.settled(second.Term - 1) // the same term or a later one
	if third.Leader != old {
		c.logged(old, fmt.Sprintf("%s follows %s at term %d", old, third.Leader, third.Term))
	}

	// Replace a follower by one with its data wiped: it starts at term 0,
	// and catches up.
	var wiped string
	for _, id := range c.ids {
		if id != third.Leader {
			wiped = id
			break
		}
	}
	c.kill(wiped)
	c.start(wiped, t.TempDir())
	if got := c.startTerm(wiped); got != 0 {
		t.Fatalf("%s started on wiped data at term %d, not 0", wiped, got)
	}
	c.settled(third.Term - 1)

	// SIGTERM ends a node cleanly.
	p := c.procs[wiped]
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("%s exited with %v on SIGTERM", wiped, p.err)
		}
	case <-time.After(waitLimit):
		t.Fatalf("%s did not exit on SIGTERM", wiped)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	good := []string{"--id", "n1", "--listen", "127.0.0.1:1", "--status", "127.0.0.1:2", "--client", "127.0.0.1:4", "--data", t.TempDir()}
	with := func(extra ...string) []string { return append(append([]string{}, good...), extra...) }
	for _, args := range [][]string{
		{},
		with(),
		with("--peer", "n2"),
		with("--peer", "n1=127.0.0.1:3"),
		with("--peer", "n2=127.0.0.1:3", "--election-timeout", "soon"),
		with("--peer", "n2=127.0.0.1:3", "--election-timeout", "60ms"),
		with("--peer", "n2=127.0.0.1:3", "extra"),
		with("--peer", "n2=127.0.0.1:3", "--listen", "nowhere"),
		with("--peer", "n2=127.0.0.1:3", "--client", "nowhere"),
		with("--peer", "n2=127.0.0.1:3", "--lease", "300ms"), // not shorter than the election timeout
		with("--peer", "n2=127.0.0.1:3", "--lease", "-1s"),
		{"--id", "n1", "--listen", "127.0.0.1:1", "--status", "127.0.0.1:2", "--data", t.TempDir(), "--peer", "n2=127.0.0.1:3"},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%q: got %v, want exit status 2", args, err)
		}
		if !strings.HasPrefix(stderr.String(), "tcp-leader: ") {
			t.Errorf("%q: stderr %q does not explain", args, stderr.String())
		}
	}
}

// conn is a client's connection to node id.
type conn struct {
	t  *testing.T
	id string
	c  net.Conn
	r  *bufio.Reader
}

func (c *cluster) dial(id string) *conn {
	c.t.Helper()
	nc, err := net.DialTimeout("tcp", c.client[id], time.Second)
	if err != nil {
		c.t.Fatalf("dial %s: %v", id, err)
	}
	c.t.Cleanup(func() { nc.Close() })
	return &conn{t: c.t, id: id, c: nc, r: bufio.NewReader(nc)}
}

// ask sends raw, which ends in a newline, and returns the answer line.
func (c *conn) ask(raw string) string {
	c.t.Helper()
	c.c.SetDeadline(time.Now().Add(waitLimit))
	if _, err := io.WriteString(c.c, raw); err != nil {
		c.t.Fatalf("%s: write %q: %v", c.id, raw, err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("%s: after %q: %v", c.id, raw, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// expect sends each request and checks its answer.
func (c *conn) expect(pairs ...string) {
	c.t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if got := c.ask(pairs[i] + "\n"); got != pairs[i+1] {
			c.t.Errorf("%s: %q answered %q, want %q", c.id, pairs[i], got, pairs[i+1])
		}
	}
}

func TestClients(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	for _, id := range c.ids {
		c.start(id, t.TempDir())
	}
	st := c.settled(0)
	lead := c.dial(st.Leader)
	lead.expect(
		"GET 1", "NOTFOUND",
		"CAS 1 0 1", "NOTFOUND",
		"PUT 1 10", "OK",
		"GET 1", "OK 10",
		"CAS 1 9 11", "MISMATCH 10",
		"GET 1", "OK 10",
		"CAS 1 10 11", "OK",
		"GET 1", "OK 11",
		"PUT -2 -9223372036854775808", "OK",
		"GET -2", "OK -9223372036854775808",
		"PUT 1 12\r", "OK", // a CRLF line ending is read as LF
		"GET 1", "OK 12",
		"  PUT   3  4 ", "OK",
		"GET 3", "OK 4",
	)
	var other string
	for _, id := range c.ids {
		if id != st.Leader {
			other = id
			break
		}
	}
	c.dial(other).expect(
		"GET 1", "NOTLEADER "+st.Leader,
		"PUT 1 2", "NOTLEADER "+st.Leader,
		"CAS 1 12 13", "NOTLEADER "+st.Leader,
		"GET x", `ERR not an int64: "x"`,
	)

	// Malformed lines: each answered ERR, and the connection goes on.
	for _, bad := range []string{
		"", " ", "get 1", "DEL 1", "GET", "GET 1 2", "PUT 1", "PUT 1 2 3", "CAS 1 2",
		"GET 1.5", "GET 0x10", "PUT 1 9223372036854775808", "GET \x00\xff", "\xff\xfe\x00",
		strings.Repeat("9", clientLine-1), // at the limit with its newline, but no int64
	} {
		got := lead.ask(bad + "\n")
		if !strings.HasPrefix(got, "ERR ") || strings.ContainsAny(got, "\r\x00") || !utf8.ValidString(got) {
			t.Errorf("%.40q answered %q, want one printable ERR line", bad, got)
		}
	}
	lead.expect("GET 1", "OK 12")
	// Lines past the limit are answered ERR, and skipped whole.
	tooLong := fmt.Sprintf("ERR line longer than %d bytes", clientLine)
	lead.expect(
		"GET "+strings.Repeat("0", clientLine-6)+"1", "OK 12", // clientLine bytes with its newline
		"GET "+strings.Repeat("0", clientLine-5)+"1", tooLong,
		"PUT 1 "+strings.Repeat("0", 5*clientLine)+"1", tooLong,
		"GET 1", "OK 12",
	)

	// A request cut short by the end of its connection is not carried out.
	cut := c.dial(st.Leader)
	io.WriteString(cut.c, "PUT 1 99")
	cut.c.Close()
	time.Sleep(100 * time.Millisecond)
	c.dial(st.Leader).expect("GET 1", "OK 12")
}

func TestClientsWithoutLeader(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	c.start("n1", t.TempDir()) // alone, it cannot win a majority
	c.startTerm("n1")
	c.dial("n1").expect(
		"GET 1", "NOTLEADER",
		"PUT 1 2", "NOTLEADER",
		"PUT", "ERR want GET k, PUT k v or CAS k from to",
	)
	c.logged("n1", "n1 became candidate at term 1")
	c.dial("n1").expect("CAS 1 2 3", "NOTLEADER")
}

// TestReplication checks that the leader's writes reach the others, by
// failing it over: first by killing it, then by restarting it (it begins
// with an empty table and adopts the new leader's) and killing the new
// leader.
func TestReplication(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	// A longer timeout than the other tests', so that the restarted node
	// hears the leader (within its redial backoff, half the timeout, and a
	// heartbeat) well before it would stand itself.
	c.timeout = "300ms"
	data := map[string]string{}
	for _, id := range c.ids {
		data[id] = t.TempDir()
		c.start(id, data[id])
	}
	first := c.settled(0)
	c.dial(first.Leader).expect(
		"PUT 1 100", "OK",
		"PUT 2 200", "OK",
		"CAS 1 100 101", "OK",
	)
	time.Sleep(20 * heartbeat) // the table goes with every heartbeat
	c.kill(first.Leader)
	second := c.settled(first.Term)
	c.dial(second.Leader).expect(
		"GET 1", "OK 101",
		"GET 2", "OK 200",
		"PUT 3 300", "OK",
	)
	time.Sleep(20 * heartbeat)

	// Restarted on its data, the old leader has an empty table until a
	// heartbeat of the new one, which it adopts as it follows.
	c.start(first.Leader, data[first.Leader])
	third := c.settled(second.Term - 1)
	if third.Leader != second.Leader {
		t.Fatalf("%s leads term %d after %s restarted, not %s", third.Leader, third.Term, first.Leader, second.Leader)
	}
	c.kill(second.Leader)
	fourth := c.settled(third.Term)
	c.dial(fourth.Leader).expect(
		"GET 1", "OK 101",
		"GET 2", "OK 200",
		"GET 3", "OK 300",
	)
}

// TestAdapter drives the store through the client adapter, as coup's
// lin-kv workload does: a client bound to a follower is redirected to the
// leader, and one bound to a member that is gone gets a definite error.
func TestAdapter(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	for _, id := range c.ids {
		c.start(id, t.TempDir())
	}
	st := c.settled(0)
	var follower string
	for _, id := range c.ids {
		if id != st.Leader {
			follower = id
			break
		}
	}

	cmd := exec.Command(adapterBin, "--timeout", "2s")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill() // by pid; an error means it is gone already
		<-done
		if t.Failed() {
			t.Logf("stderr of the adapter (pid %d):\n%s", cmd.Process.Pid, stderr)
		}
	})
	out := bufio.NewScanner(stdout)
	ask := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		ch := make(chan bool, 1)
		go func() { ch <- out.Scan() }()
		select {
		case ok := <-ch:
			if !ok {
				t.Fatalf("the adapter's stdout ended after %s", line)
			}
		case <-time.After(waitLimit):
			t.Fatalf("no answer to %s", line)
		}
		return out.Text()
	}

	addrs := map[string]map[string]string{}
	for _, id := range c.ids {
		addrs[id] = map[string]string{"client": c.client[id], "peer": c.listen[id], "status": c.status[id]}
	}
	initMsg, _ := json.Marshal(map[string]any{"src": "coup", "dest": "c1",
		"body": map[string]any{"type": "init", "msg_id": 0, "node_id": "c1", "node_ids": c.ids, "addrs": addrs}})
	for _, x := range []struct{ req, want string }{
		{string(initMsg), `{"src":"c1","dest":"coup","body":{"type":"init_ok","in_reply_to":0}}`},
		{`{"src":"c1","dest":"` + follower + `","body":{"type":"write","msg_id":1,"key":3,"value":4}}`,
			`{"src":"` + follower + `","dest":"c1","body":{"type":"write_ok","in_reply_to":1}}`},
		{`{"src":"c1","dest":"` + follower + `","body":{"type":"read","msg_id":2,"key":3}}`,
			`{"src":"` + follower + `","dest":"c1","body":{"type":"read_ok","in_reply_to":2,"value":4}}`},
		{`{"src":"c1","dest":"` + st.Leader + `","body":{"type":"cas","msg_id":3,"key":3,"from":5,"to":1}}`,
			`{"src":"` + st.Leader + `","dest":"c1","body":{"type":"error","in_reply_to":3,"code":22,"text":"expected 5, found 4"}}`},
		{`{"src":"c1","dest":"` + st.Leader + `","body":{"type":"cas","msg_id":4,"key":3,"from":4,"to":1}}`,
			`{"src":"` + st.Leader + `","dest":"c1","body":{"type":"cas_ok","in_reply_to":4}}`},
		{`{"src":"c1","dest":"` + st.Leader + `","body":{"type":"read","msg_id":5,"key":7}}`,
			`{"src":"` + st.Leader + `","dest":"c1","body":{"type":"error","in_reply_to":5,"code":20,"text":"key does not exist"}}`},
	} {
		if got := ask(x.req); got != x.want {
			t.Errorf("%s\nanswered %s\nwant      %s", x.req, got, x.want)
		}
	}

	c.kill(st.Leader)
	var a struct {
		Body struct {
			Type string `json:"type"`
			Code *int   `json:"code"`
		} `json:"body"`
	}
	got := ask(`{"src":"c1","dest":"` + st.Leader + `","body":{"type":"read","msg_id":6,"key":3}}`)
	if json.Unmarshal([]byte(got), &a) != nil || a.Body.Type != "error" || a.Body.Code == nil || *a.Body.Code != 11 {
		t.Errorf("a read at the killed leader answered %s, want a definite error (code 11)", got)
	}

	stdin.Close()
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Errorf("the adapter exited with %v when stdin closed", err)
		}
	case <-time.After(waitLimit):
		t.Errorf("the adapter did not exit when stdin closed")
	}
}

// In lease mode a write is answered once a majority holds it, and a read
// only while the leader's lease holds: a leader whose followers are gone
// leaves a write unanswered (its fate unknown) and, its lease past,
// refuses to read.
func TestLease(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	c.timeout, c.lease = "300ms", "200ms"
	for _, id := range c.ids {
		c.start(id, t.TempDir())
	}
	st := c.settled(0)
	l := c.dial(st.Leader)
	l.expect("PUT 1 100", "OK")
	// The lease follows a majority's ack of a heartbeat: at most one away.
	deadline := time.Now().Add(waitLimit)
	for got := l.ask("GET 1\n"); got != "OK 100"; got = l.ask("GET 1\n") {
		if got != "NOTLEADER" || time.Now().After(deadline) {
			t.Fatalf("GET 1 answered %q, want OK 100 once the lease holds", got)
		}
		time.Sleep(heartbeat)
	}
	for _, id := range c.ids {
		if id != st.Leader {
			c.kill(id)
		}
	}
	l.c.SetDeadline(time.Now().Add(waitLimit))
	io.WriteString(l.c, "PUT 2 200\n")
	if line, err := l.r.ReadString('\n'); err == nil {
		t.Fatalf("a write no majority holds was answered %q; want the connection closed unanswered", line)
	}
	time.Sleep(300 * time.Millisecond) // past the lease
	if got := c.dial(st.Leader).ask("GET 1\n"); got != "NOTLEADER" {
		t.Fatalf("GET 1 past the lease answered %q, want NOTLEADER", got)
	}
}
