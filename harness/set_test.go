package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// gsetMain is a node program serving Maelstrom's g-set alone, from its
// own set: "<test binary> gset" (see TestMain). With "forget", it forgets
// every element it acknowledged after its 100th add.
func gsetMain(args []string) int {
	forget := len(args) > 0 && args[0] == "forget"
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	self := ""
	var set []int64
	adds := 0
	for in.Scan() {
		var env struct {
			Src  string `json:"src"`
			Body struct {
				Type    string `json:"type"`
				MsgID   int    `json:"msg_id"`
				NodeID  string `json:"node_id"`
				Element int64  `json:"element"`
			} `json:"body"`
		}
		if json.Unmarshal(in.Bytes(), &env) != nil {
			continue
		}
		b := env.Body
		reply := func(body string) {
			fmt.Fprintf(out, `{"src":%q,"dest":%q,"body":%s}`+"\n", self, env.Src, body)
			out.Flush()
		}
		switch b.Type {
		case "init":
			self = b.NodeID
			reply(fmt.Sprintf(`{"type":"init_ok","in_reply_to":%d}`, b.MsgID))
		case "add":
			adds++
			if !forget || adds <= 100 {
				set = append(set, b.Element)
			}
			reply(fmt.Sprintf(`{"type":"add_ok","in_reply_to":%d}`, b.MsgID))
		case "read":
			v, _ := json.Marshal(set)
			if set == nil {
				v = []byte("[]")
			}
			reply(fmt.Sprintf(`{"type":"read_ok","in_reply_to":%d,"value":%s}`, b.MsgID, v))
		}
	}
	return 0
}

// The set workload under the pipe driver: a node of one's own that keeps
// every add loses none, and its final reads, far longer than a field's
// bound, are recorded whole; one that forgets adds loses them. The clients
// ask for 2000 adds, so that a loaded machine, which acknowledges a
// fraction of them, still gives final reads longer than the bound.
func TestSetWorkloadThroughPipes(t *testing.T) {
	for _, mode := range []string{"keep", "forget"} {
		t.Run(mode, func(t *testing.T) {
			res, h := runScenario(t, fmt.Sprintf(`command = [%q, "gset", %q]
nodes = 1
duration = "2s"
recovery = "400ms"

[workload]
kind = "set"
clients = 2
rate = 1000
`, os.Args[0], mode))
			r := res.Checks["lost-writes"]
			t.Logf("%v: %s", r.Valid, r.Explanation)
			if adds, _ := r.Figures["acknowledged"].(int); adds < 200 {
				t.Fatalf("%v acknowledged adds, want 200 or more", r.Figures["acknowledged"])
			}
			want := checks.True
			if mode == "forget" {
				want = checks.False
			}
			if r.Valid != want {
				t.Fatalf("lost-writes %v, want %v", r.Valid, want)
			}
			reads := 0
			for e := range h.All() {
				if e.Kind == history.KindOp && e.F == "read" && e.Type == history.OpOK {
					reads++
					if (mode == "keep" && len(e.Value) <= MaxField) || strings.Contains(e.Value, "cut") || !json.Valid([]byte(e.Value)) {
						t.Errorf("a final read of %d bytes recorded as %.60q…: want it whole, longer than %d", len(e.Value), e.Value, MaxField)
					}
				}
			}
			if reads != 2 {
				t.Errorf("%d final reads, want one per client", reads)
			}
			if mode == "forget" && !slices.Contains(r.Nodes, "n1") {
				t.Errorf("lost at %v, want n1", r.Nodes)
			}
		})
	}
}
