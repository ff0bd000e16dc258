package servers

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// TestMain makes the test binary double as a client adapter when
// COUP_TEST_ADAPTER is set (fakeAdapter), and as a plain TCP program, the
// "server" of these tests, when COUP_TEST_PEER is set: it listens on its
// address, dials every peer given, writes "from ID seq N" lines to each
// every 5ms on the connection it dialled, and prints every line it reads
// on a connection it accepted, so that its log says what crossed each
// direction. Its first argument leads, at term 1, and says so.
func TestMain(m *testing.M) {
	if os.Getenv("COUP_TEST_PEER") != "" {
		peer(os.Args[1:])
		return
	}
	if mode := os.Getenv("COUP_TEST_ADAPTER"); mode != "" {
		fakeAdapter(mode)
		return
	}
	os.Exit(m.Run())
}

// peer is the plain TCP program: ID LISTEN LEADER PEER...
func peer(args []string) {
	id, listen, leader, peers := args[0], args[1], args[2], args[3:]
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("COUP_TEST_PEER_EXIT") == id {
		// Exit on its own well after the cluster's start (a run of
		// such a test lasts longer than that), saying why first.
		go func() {
			time.Sleep(1500 * time.Millisecond)
			fmt.Fprintf(os.Stderr, "%s: giving up\n", id)
			os.Exit(4)
		}()
	}
	if id == leader {
		fmt.Printf("%s leads at term 1\n", id)
	} else {
		fmt.Printf("%s follows %s at term 1\n", id, leader)
	}
	var mu sync.Mutex
	serve := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if sc.Text() == "ping" { // a client's probe (probeAdapter)
						fmt.Fprintf(c, "pong\n")
						continue
					}
					mu.Lock()
					fmt.Printf("%s got %s\n", id, sc.Text())
					mu.Unlock()
				}
			}()
		}
	}
	go serve(ln)
	if also := os.Getenv("COUP_TEST_ALSO"); also != "" { // a second port
		ln, err := net.Listen("tcp", also)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go serve(ln)
	}
	for _, p := range peers {
		go func() {
			for {
				c, err := net.Dial("tcp", p)
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				for seq := 0; ; seq++ {
					if _, err := fmt.Fprintf(c, "from %s seq %d\n", id, seq); err != nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				c.Close()
			}
		}()
	}
	select {}
}

// peerScenario is a scenario of three plain TCP programs (this test
// binary), with extra appended (faults).
func peerScenario(t *testing.T, extra string) *scenario.Scenario {
	t.Helper()
	return peerScenarioWith(t, "", "[checks]\nrun = [\"two-leaders\", \"one-leader-per-term\", \"agreement\"]\n"+extra)
}

// peerScenarioWith is a peer scenario with more keys for [server], and
// rest (checks, faults, a workload) appended.
func peerScenarioWith(t *testing.T, server, rest string) *scenario.Scenario {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`nodes = 3
duration = "1s"
recovery = "500ms"

[server]
command = ["sh", "-c", "exec %s {{.ID}} {{.Addr.peer}} n1%s"]
env = { COUP_TEST_PEER = "1" }
ports = ["peer"]
peer = ["peer"]
start_timeout = "10s"
%s

[[server.log]]
match = '(?P<self>n[0-9]) leads at term (?P<term>[0-9]+)'
role = "leader"

[[server.log]]
match = 'follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

%s`, exe, `{{range .Nodes}}{{if ne .ID $.ID}} {{(index $.Reach .ID).Addr.peer}}{{end}}{{end}}`, server, rest)
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "peers.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// seqs reads a node's log: for each sender, the sequence numbers it got.
func seqs(t *testing.T, dir, node string) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, node+".log"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	re := regexp.MustCompile(`(?m)^` + node + ` got from (n[0-9]) seq ([0-9]+)$`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		var n int
		fmt.Sscan(m[2], &n)
		out[m[1]] = append(out[m[1]], n)
	}
	return out
}

// A one-way partition of one directed link stalls exactly that
// direction: n1's bytes to n2 are held while n2's to n1 flow, and every
// held byte arrives, in order, after the heal. The history records the
// fault with both ends, and the programs' own beliefs as reports.
func TestOneWayCutStallsOneDirection(t *testing.T) {
	sc := peerScenario(t, `
[[faults]]
kind = "partition"
shape = "ring-cut"
target = "n1"
oneway = true
direction = "out"
at = "300ms"
for = "400ms"
`)
	sc.Server.Network = scenario.NetworkProxy // the proxy's stream faults: coup's network drops packets instead
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted() {
		t.Fatalf("not started: %s", res.Error)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var start, end *history.Event
	reports := 0
	for e := range h.All() {
		switch {
		case e.Kind == history.KindNemesis && e.Phase == history.PhaseStart:
			start = e
		case e.Kind == history.KindNemesis && e.Phase == history.PhaseEnd:
			end = e
		case e.Kind == history.KindReport && e.What == history.ReportLeader && e.Value == "n1" && e.Term != nil && *e.Term == 1:
			reports++
		}
	}
	if start == nil || end == nil || !strings.Contains(start.Detail, "n1->n2") || !strings.Contains(start.Detail, "stall") {
		t.Fatalf("the history's partition: %+v … %+v; want its start naming n1->n2 and stall", start, end)
	}
	if reports != 3 {
		t.Errorf("%d reports of n1 leading at term 1, want 3 (one per node)", reports)
	}
	// What n2 got from n1 stops during the cut and resumes after, with no
	// gap and nothing twice: held, not dropped. What n1 got from n2 never
	// stops. Times come from the senders' sequence numbers (one per 5ms).
	got2 := seqs(t, dir, "n2")["n1"]
	got1 := seqs(t, dir, "n1")["n2"]
	if len(got2) == 0 || len(got1) == 0 {
		t.Fatalf("n2 got %d lines from n1 and n1 %d from n2", len(got2), len(got1))
	}
	for i, s := range got2 {
		if s != i {
			t.Fatalf("n2 got n1's seq %d at place %d: a held byte was lost, repeated or reordered", s, i)
		}
	}
	for i, s := range got1 {
		if s != i {
			t.Fatalf("n1 got n2's seq %d at place %d", s, i)
		}
	}
	counts := res.Stats.Counts
	if counts[history.CountLinkHeld] == 0 {
		t.Errorf("no chunk was held: counts %v", counts)
	}
}

// A cut that lasts holds its direction only: cut n1→n2 one way and stop
// the run before the heal, and n2 got from n1 only what crossed before
// the cut, while n1 went on getting n2's lines all along.
func TestOneWayCutHoldsOnlyItsDirection(t *testing.T) {
	sc := peerScenario(t, `
[[faults]]
kind = "partition"
shape = "ring-cut"
target = "n1"
oneway = true
direction = "out"
at = "100ms"
`)
	sc.Server.Network = scenario.NetworkProxy // the proxy's stream faults: coup's network drops packets instead
	// Stop the run before the heal: the cut holds until the end, so what
	// crossed n1→n2 is only what was sent before it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := t.TempDir()
	done := make(chan string, 1)
	go func() {
		_, dir, _ := Run(ctx, sc, Options{Store: store})
		done <- dir
	}()
	time.Sleep(800 * time.Millisecond) // a run of 1s: cut at 100ms, stop before the heal
	cancel()
	dir := <-done
	from1 := len(seqs(t, dir, "n2")["n1"])
	from2 := len(seqs(t, dir, "n1")["n2"])
	// About 20 lines cross before the cut (100ms at one per 5ms, after
	// the start), and ten times that in the other direction by the end.
	if from1 >= from2/2 {
		t.Errorf("n2 got %d lines from n1 and n1 %d from n2: n1→n2 was not held", from1, from2)
	}
	if from2 < 50 {
		t.Errorf("n1 got only %d lines from n2: n2→n1 did not flow", from2)
	}
}

// Every server process is stopped by pid when the run ends: none is left.
func TestNoServerLeftBehind(t *testing.T) {
	sc := peerScenario(t, "")
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %v", err, res)
	}
	for _, pid := range pids(t, dir) {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("server pid %d still running after the run", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// pids lists the server pids a run's logs name.
func pids(t *testing.T, dir string) []int {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "n*.log"))
	var out []int
	re := regexp.MustCompile(`(?m)^--- coup: incarnation [0-9]+, pid ([0-9]+)`)
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			var pid int
			fmt.Sscan(m[1], &pid)
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		t.Fatal("no pid in the logs")
	}
	return out
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// Corruption, loss and delay act on the streams and show in the history
// and the counters: a corrupted chunk is a corrupt event that says at
// which byte, a lost one stalls its connection and then resets it.
func TestStreamFaultsReachTheHistory(t *testing.T) {
	sc := peerScenario(t, `
[[faults]]
kind = "corrupt"
target = "n1"
direction = "out"
probability = 0.2
at = "200ms"
for = "200ms"

[[faults]]
kind = "loss"
target = "n2"
direction = "out"
at = "500ms"
for = "300ms"

[[faults]]
kind = "delay"
target = "n3"
delay = "20ms"
at = "200ms"
for = "600ms"
`)
	sc.Server.Network = scenario.NetworkProxy // the proxy's stream faults: coup's network drops packets instead
	sc.Server.LossReset.D = 100 * time.Millisecond
	res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
	if err != nil || res.NotStarted() {
		t.Fatalf("run: %v %v", err, res)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt, resets := 0, 0
	for e := range h.All() {
		switch {
		case e.Kind == history.KindMsg && e.What == history.MsgCorrupt:
			corrupt++
			if e.Src != "n1" || !regexp.MustCompile(`bitflip at byte [0-9]+`).MatchString(e.Reason) {
				t.Errorf("corrupt event %+v: want from n1, at a byte", e)
			}
		case e.Kind == history.KindMsg && e.What == history.MsgDrop && strings.HasPrefix(e.Reason, "reset"):
			resets++
			if e.Src != "n2" {
				t.Errorf("reset %+v: want one on a link from n2 (the lossy one)", e)
			}
		}
	}
	c := res.Stats.Counts
	if corrupt == 0 || c[history.CountLinkCorrupted] != int64(corrupt) {
		t.Errorf("%d corrupt events, %d counted", corrupt, c[history.CountLinkCorrupted])
	}
	if resets == 0 || c[history.CountLinkResets] < int64(resets) {
		t.Errorf("%d resets in the history, %d counted", resets, c[history.CountLinkResets])
	}
	if c[history.CountLinkHeld] == 0 {
		t.Errorf("nothing held by the loss or the delay: %v", c)
	}
}
