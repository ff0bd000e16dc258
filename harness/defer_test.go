package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
)

// deferredMain is a foreign node that says what init asked of it (a
// metric report "defer_start", "true" or "false", once it has answered
// init) and how long after init coup's start message came (a metric
// "waited_ms"). n4 takes 300ms to answer init.
func deferredMain() int {
	in := bufio.NewScanner(os.Stdin)
	self := ""
	var inited time.Time
	write := func(dest string, body any) {
		b, _ := json.Marshal(map[string]any{"src": self, "dest": dest, "body": body})
		os.Stdout.Write(append(b, '\n'))
	}
	for in.Scan() {
		var env struct {
			Src  string `json:"src"`
			Body struct {
				Type       string `json:"type"`
				MsgID      int    `json:"msg_id"`
				NodeID     string `json:"node_id"`
				DeferStart bool   `json:"defer_start"`
			} `json:"body"`
		}
		if json.Unmarshal(in.Bytes(), &env) != nil {
			continue
		}
		switch env.Body.Type {
		case "init":
			self, inited = env.Body.NodeID, time.Now()
			if self == "n4" {
				time.Sleep(300 * time.Millisecond)
			}
			write(env.Src, map[string]any{"type": "init_ok", "in_reply_to": env.Body.MsgID})
			write("coup", map[string]any{"type": "report", "what": "metric", "name": "defer_start", "value": fmt.Sprint(env.Body.DeferStart)})
		case "start":
			write("coup", map[string]any{"type": "report", "what": "metric", "name": "waited_ms", "value": fmt.Sprint(time.Since(inited).Milliseconds())})
		}
	}
	return 0
}

// A foreign node given defer_start is asked so in init, and gets coup's
// start message once every node has answered init: the nodes that
// answered at once wait for n4, which takes 300ms. Without the key, init
// asks nothing and no start message comes.
func TestForeignDeferStart(t *testing.T) {
	for _, deferred := range []bool{true, false} {
		top := ""
		if deferred {
			top = "defer_start = true\n"
		}
		_, h := runScenario(t, fmt.Sprintf(`command = [%q, "deferred"]
%snodes = 4
duration = "200ms"
recovery = "100ms"
[workload]
kind = "none"
[checks]
run = ["two-leaders"]
`, os.Args[0], top))
		asked, waited := map[string]string{}, map[string]int{}
		for _, e := range h.Events {
			switch {
			case e.Kind == history.KindReport && e.Name == "defer_start":
				asked[e.Node] = e.Value
			case e.Kind == history.KindReport && e.Name == "waited_ms":
				waited[e.Node], _ = strconv.Atoi(e.Value)
			}
		}
		for _, n := range []string{"n1", "n2", "n3", "n4"} {
			if asked[n] != fmt.Sprint(deferred) {
				t.Errorf("defer_start %v: %s was asked defer_start %q", deferred, n, asked[n])
			}
			if _, ok := waited[n]; ok != deferred {
				t.Errorf("defer_start %v: %s got a start message: %v", deferred, n, ok)
			}
		}
		for _, n := range []string{"n1", "n2", "n3"} {
			if ms, ok := waited[n]; ok && ms < 250 {
				t.Errorf("%s got its start %dms after init: not after n4, which answered init 300ms after its own", n, ms)
			}
		}
	}
}
