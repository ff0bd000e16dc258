package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// hostileMain is a foreign node that misbehaves on purpose, by the mode
// given on its command line ("<test binary> hostile MODE"). Every mode
// answers init; node n1 answers each client request honestly, after
// honestDelay; what the others do is the mode's.
func hostileMain(args []string) int {
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(s)
		out.WriteByte('\n')
		out.Flush()
	}
	self := ""
	for in.Scan() {
		var env struct {
			Src  string          `json:"src"`
			Body json.RawMessage `json:"body"`
		}
		if json.Unmarshal(in.Bytes(), &env) != nil {
			continue
		}
		var body struct {
			Type   string `json:"type"`
			MsgID  int    `json:"msg_id"`
			NodeID string `json:"node_id"`
		}
		_ = json.Unmarshal(env.Body, &body)
		switch {
		case body.Type == "init" && mode == "mute":
			// Never answer: read on until the harness gives up.
		case body.Type == "init":
			self = body.NodeID
			write(fmt.Sprintf(`{"src":%q,"dest":"coup","body":{"type":"init_ok","in_reply_to":%d}}`, self, body.MsgID))
			if self != "n1" {
				go hostileAct(mode, self, write)
			}
		case self == "n1" && strings.HasPrefix(env.Src, "c"):
			src, id, typ := env.Src, body.MsgID, body.Type
			time.AfterFunc(honestDelay, func() {
				write(fmt.Sprintf(`{"src":"n1","dest":%q,"body":{"type":"%s_ok","in_reply_to":%d}}`, src, typ, id))
			})
		}
	}
	return 0
}

// floodMessages is how many messages the "flood" mode sends.
const floodMessages = 20000

// honestDelay is how long n1 takes to answer a client.
const honestDelay = 300 * time.Millisecond

// hostileAct is what a node other than n1 does once up.
func hostileAct(mode, self string, write func(string)) {
	switch mode {
	case "flood":
		// Send n1 as many messages as the run takes, as fast as the pipe
		// goes.
		line := `{"src":"` + self + `","dest":"n1","body":{"type":"flood","payload":"` + strings.Repeat("x", 64) + `"}}`
		for range floodMessages {
			write(line)
		}
	case "huge":
		// Make the history's lines long and its keys many: a report value
		// of 900 kB of characters that JSON escapes six-fold, a line longer than a
		// node may write, a thousand invented message types, and one type
		// ten thousand bytes long.
		write(`{"src":"` + self + `","dest":"coup","body":{"type":"report","what":"metric","name":"m","value":"` + strings.Repeat("<", 900000) + `"}}`)
		write(strings.Repeat("x", 2<<20))
		for i := range 1000 {
			write(fmt.Sprintf(`{"src":%q,"dest":"n1","body":{"type":"t%d"}}`, self, i))
		}
		write(`{"src":"` + self + `","dest":"n1","body":{"type":"` + strings.Repeat("y", 10000) + `"}}`)
		write(`{"src":"` + self + `","dest":"coup","body":{"type":"report","what":"metric","name":"done","value":"1"}}`)
	case "chat":
		// Send n1 three messages without a checksum, as a node written
		// for Maelstrom does.
		for range 3 {
			write(`{"src":"` + self + `","dest":"n1","body":{"type":"hello"}}`)
		}
	case "exit":
		// Exit on its own, as a node that throws does, saying why on
		// stderr first.
		time.Sleep(100 * time.Millisecond)
		fmt.Fprintln(os.Stderr, "about to exit: boom")
		os.Exit(3)
	case "linger":
		// Leave a child in a session of its own holding stdout, which the
		// kill of the node's group does not reach: the node's output ends
		// only when the child has written its last line and exited, a
		// second on.
		child := exec.Command("sh", "-c", `sleep 1; echo '{"src":"`+self+`","dest":"coup","body":{"type":"report","what":"metric","name":"lingered","value":"1"}}'`)
		child.Stdout = os.Stdout
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err == nil {
			write(`{"src":"` + self + `","dest":"coup","body":{"type":"report","what":"metric","name":"child","value":"` + strconv.Itoa(child.Process.Pid) + `"}}`)
		}
	case "forge":
		// Answer client c1's first requests in n1's place, as c1 (a
		// guessed in_reply_to), and write to a client and a node that do
		// not exist.
		for range 40 {
			for id := 1; id <= 3; id++ {
				write(fmt.Sprintf(`{"src":"n1","dest":"c1","body":{"type":"elect_ok","in_reply_to":%d}}`, id))
			}
			write(`{"src":"` + self + `","dest":"c9","body":{"type":"elect_ok","in_reply_to":1}}`)
			write(`{"src":"` + self + `","dest":"n9","body":{"type":"ping"}}`)
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func hostileScenario(mode string, nodes int, extra string) string {
	return fmt.Sprintf(`
algorithm = "hostile"
command = [%q, "hostile", %q]
nodes = %d
duration = "500ms"
recovery = "200ms"
[workload]
kind = "election"
initiators = ["n1"]
[checks]
run = ["two-leaders"]
%s`, os.Args[0], mode, nodes, extra)
}

// A node cannot answer a client in another node's place: its forged
// answers are refused (logged, counted, recorded), and the operation
// completes with the answer of the node the request went to.
func TestForgedClientAnswersRefused(t *testing.T) {
	res, h := runScenario(t, hostileScenario("forge", 2, ""))
	var invoke, done *history.Event
	refused := map[string]int{}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == history.KindOp && e.Process == "c1" && e.Type == history.OpInvoke:
			invoke = e
		case e.Kind == history.KindOp && e.Process == "c1":
			done = e
		case e.Kind == history.KindRefused:
			if e.Node != "n2" {
				t.Errorf("refused event names %s, want n2: %+v", e.Node, e)
			}
			refused[e.What]++
		}
	}
	if invoke == nil || done == nil {
		t.Fatalf("c1's election request: invoke %v, completion %v", invoke, done)
	}
	if done.Type != history.OpOK || done.Node != "n1" {
		t.Errorf("c1's request ended %s at %s, want ok at n1", done.Type, done.Node)
	}
	if got := time.Duration(done.Time - invoke.Time); got < honestDelay*3/4 {
		t.Errorf("c1's request completed %s after it was invoked: a forged answer completed it before n1's (%s)", got, honestDelay)
	}
	if refused[RefusedReply] == 0 || refused[RefusedDest] == 0 {
		t.Errorf("refused events by class %v, want reply and dest", refused)
	}
	c := res.Stats.Counts
	if c[history.CountRefused+"."+RefusedReply] < int64(refused[RefusedReply]) || c[history.CountRefused+"."+RefusedDest] < 2*RefusalsRecorded {
		t.Errorf("counts %v: want every forged answer and every message to nobody counted", c)
	}
	if refused[RefusedDest] > RefusalsRecorded {
		t.Errorf("%d refused events of one class from one node, want at most %d", refused[RefusedDest], RefusalsRecorded)
	}
}

// Whatever a node writes, the run's history, results and report stay
// small enough to read back: strings are cut, over-long lines are
// refused, and invented message types are counted under one name past a
// bound.
func TestHostileOutputStaysReadable(t *testing.T) {
	res, h, dir := runScenarioDir(t, hostileScenario("huge", 2, ""))
	if len(h.Bad) > 0 {
		t.Errorf("the history has unreadable lines: %+v", h.Bad)
	}
	longest := 0
	raw, err := os.ReadFile(filepath.Join(dir, lifecycle.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		longest = max(longest, len(line))
	}
	if longest > 64<<10 {
		t.Errorf("the longest history line has %d bytes", longest)
	}
	for _, f := range []string{lifecycle.ResultsFile, lifecycle.ReportFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() > 2<<20 {
			t.Errorf("%s: %v, %d bytes", f, err, st.Size())
		}
	}
	types, cut, done := map[string]bool{}, false, false
	for _, e := range h.Events {
		switch {
		case e.Kind == history.KindMsg && e.What == history.MsgSend:
			types[e.MType] = true
		case e.Kind == history.KindReport && e.Name == "m":
			cut = len(e.Value) <= MaxField && strings.Contains(e.Value, "[cut: 900000 bytes]")
		case e.Kind == history.KindReport && e.Name == "done":
			done = true
		}
	}
	if !cut || !done {
		t.Errorf("report value cut %v, last report seen %v", cut, done)
	}
	if len(types) > MaxTypes+1 || !types[OtherTypes] {
		t.Errorf("%d distinct message types recorded (other types among them: %v), want at most %d", len(types), types[OtherTypes], MaxTypes+1)
	}
	if n := len(res.Stats.Counts); n > MaxTypes+50 {
		t.Errorf("%d counters", n)
	}
	if res.Stats.Refused[RefusedLine] != 1 {
		t.Errorf("refused %v, want the over-long line", res.Stats.Refused)
	}
}

// A crash is recorded once what the killed node wrote before its kill has
// been read, not once its output has ended and it has been reaped: a kill
// leaves the node no instruction of its own to run, so its claims end
// there, however long its death, its output's end or its reaping take on
// a loaded machine. Here its output ends only when a child that escaped
// the kill in a session of its own exits, a second after, with a last
// line: the crash is recorded before that line, not after it.
func TestCrashRecordedAtTheKill(t *testing.T) {
	_, h := runScenario(t, hostileScenario("linger", 2, `
[[faults]]
kind = "crash"
target = "n2"
at = "200ms"
`))
	crash, lingered, child := -1, -1, 0
	for i, e := range h.Events {
		switch {
		case e.Kind == history.KindProcess && e.Node == "n2" && e.What == history.ProcCrash:
			crash = i
		case e.Kind == history.KindReport && e.Name == "lingered":
			lingered = i
		case e.Kind == history.KindReport && e.Name == "child":
			child, _ = strconv.Atoi(e.Value)
		}
	}
	if child == 0 {
		t.Fatal("n2 started no child")
	}
	if crash < 0 || lingered < 0 {
		t.Fatalf("n2's crash at event %d, its child's last line at %d: want both", crash, lingered)
	}
	if lingered < crash {
		t.Errorf("n2's crash recorded at event %d (%s), after its child's last line at event %d (%s), a second after the kill",
			crash, time.Duration(h.Events[crash].Time), lingered, time.Duration(h.Events[lingered].Time))
	}
	if !proc.PidStopped(child) {
		t.Errorf("n2's child %d outlived the run", child)
	}
}

// Interrupting a run whose node never answers init stops it at once,
// without waiting out the init timeout, and leaves no process behind. The
// init timeout is a minute, so that a loaded machine's slow start stays
// far below the half of it that would mean the run waited for it.
func TestInterruptWhileWaitingForInit(t *testing.T) {
	sc, err := scenario.Parse(t.Name()+".toml", "init_timeout = \"60s\"\n"+hostileScenario("mute", 3, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	res, dir, err := Run(ctx, sc, Options{Store: t.TempDir(), NodeCommand: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took >= sc.InitLimit()/2 {
		t.Errorf("the interrupted run took %s: it waited for the init timeout (%s)", took, sc.InitLimit())
	}
	if res.ExitCode != verdict.ExitUnknown || !strings.Contains(res.Error, "interrupted") {
		t.Errorf("exit %d, error %q; want %d, interrupted", res.ExitCode, res.Error, verdict.ExitUnknown)
	}
	if left := children(dir); len(left) > 0 {
		t.Errorf("node processes outlived the run: %v", left)
	}
}

// A node that floods the others cannot grow the history without bound:
// past history.max_messages the messages are counted, not recorded, a
// limit event says so and names the node, the console says so, and the
// checks that need every message say they cannot judge.
func TestFloodStopsRecordingAtTheLimit(t *testing.T) {
	const limit = 500
	src := hostileScenario("flood", 2, fmt.Sprintf("[history]\nmax_messages = %d\n", limit))
	res, h := runScenario(t, strings.Replace(src, `run = ["two-leaders"]`, `run = ["complexity"]`, 1))
	sends, limits := 0, 0
	for _, e := range h.Events {
		switch {
		case e.Kind == history.KindMsg && e.What == history.MsgSend:
			sends++
		case e.Kind == history.KindLimit:
			limits++
			if e.What != history.LimitMessages || e.Node != "n2" || e.Value != fmt.Sprint(limit) {
				t.Errorf("limit event %+v", e)
			}
		}
	}
	if sends != limit || limits != 1 {
		t.Errorf("%d sends and %d limit events recorded, want %d and 1", sends, limits, limit)
	}
	c := res.Stats.Counts
	if c[history.CountSent] != floodMessages || c[history.CountUnrecorded] != floodMessages-limit {
		t.Errorf("counted %d sent, %d unrecorded; want %d and %d", c[history.CountSent], c[history.CountUnrecorded], floodMessages, floodMessages-limit)
	}
	if !strings.Contains(res.Summary(), "past history.max_messages") {
		t.Errorf("the summary does not say recording stopped:\n%s", res.Summary())
	}
	if r := res.Checks["complexity"]; r.Valid != checks.Unknown || !strings.Contains(r.Explanation, "stopped recording messages") {
		t.Errorf("complexity %v: %s", r.Valid, r.Explanation)
	}
}
