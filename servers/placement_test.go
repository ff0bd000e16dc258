package servers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers/hostnet"
)

// probeAdapter is a client adapter that, asked anything, tries every
// address its init gave it, every port of every member at once: it
// connects, writes "ping" and waits for the peer program's "pong", within
// probeTimeout. It answers a read with the outcome of each, "n2/client=ok
// n2/peer=no …", as the read's value (and answers a write alike).
func probeAdapter() {
	in := bufio.NewScanner(os.Stdin)
	var addrs map[string]map[string]string
	for in.Scan() {
		var env struct {
			Src, Dest string
			Body      json.RawMessage
		}
		var body struct {
			Type  string                       `json:"type"`
			MsgID int                          `json:"msg_id"`
			Addrs map[string]map[string]string `json:"addrs"`
		}
		if json.Unmarshal(in.Bytes(), &env) != nil || json.Unmarshal(env.Body, &body) != nil {
			continue
		}
		reply := map[string]any{"type": "init_ok", "in_reply_to": body.MsgID}
		if body.Type == "init" {
			addrs = body.Addrs
		} else {
			reply = map[string]any{"type": body.Type + "_ok", "in_reply_to": body.MsgID, "value": probe(addrs)}
		}
		b, _ := json.Marshal(map[string]any{"src": env.Dest, "dest": env.Src, "body": reply})
		fmt.Printf("%s\n", b)
	}
}

// probeTimeout bounds one probe: a connect across a stalled cut gets no
// answer, so the probe gives up.
const probeTimeout = 400 * time.Millisecond

func probe(addrs map[string]map[string]string) string {
	var wg sync.WaitGroup
	var out []string
	for _, member := range slices.Sorted(maps.Keys(addrs)) {
		ports := slices.Sorted(maps.Keys(addrs[member]))
		got := make([]byte, len(ports))
		for i, port := range ports {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = '-'
				if c, err := net.DialTimeout("tcp", addrs[member][port], probeTimeout); err == nil {
					c.SetDeadline(time.Now().Add(probeTimeout))
					fmt.Fprintf(c, "ping\n")
					if line, err := bufio.NewReader(c).ReadString('\n'); err == nil && line == "pong\n" {
						got[i] = '+'
					}
					c.Close()
				}
			}()
		}
		wg.Wait()
		out = append(out, member+":"+string(got))
	}
	return strings.Join(out, " ")
}

// probeScenario: three peer programs, each listening on two ports, under
// the given links; two probing clients, c1 on n1 and c2 on n2, each
// bound to its host's member; n1 isolated from 1s to 2.5s.
//
// On coup's network (network "namespaces", links then meaning nothing)
// the cut lasts 3s: a probe across it waits out its dials there, as
// through a stalled proxy, and on a loaded machine two of them may not
// fit in 1.5s.
func probeScenario(t *testing.T, links, network string) *scenario.Scenario {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`nodes = 3
duration = "3s"
recovery = "200ms"

[server]
command = ["sh", "-c", "exec %s {{.ID}} {{.Addr.peer}} n1%s"]
env = { COUP_TEST_PEER = "1", COUP_TEST_ALSO = "{{.Addr.client}}" }
ports = ["peer", "client"]
peer = ["peer"]
links = %q
start_timeout = "10s"
adapter = ["sh", "-c", "COUP_TEST_ADAPTER=probe exec %s {{.Client}}"]

[[server.log]]
match = '(?P<self>n[0-9]) leads at term (?P<term>[0-9]+)'
role = "leader"

[[server.log]]
match = 'follows (?P<leader>n[0-9]) at term (?P<term>[0-9]+)'
role = "follower"

[workload]
kind = "lin-kv"
at = "200ms"
clients = 2
on = ["n1", "n2"]
targets = ["n1", "n2"]
rate = 10
mix = { read = 9, write = 1 }
timeout = "2s"

[[faults]]
kind = "partition"
shape = "isolate"
target = "n1"
at = "1s"
for = "1.5s"

[checks]
run = ["one-leader-per-term"]
`, exe, `{{range .Nodes}}{{if ne .ID $.ID}} {{(index $.Reach .ID).Addr.peer}}{{end}}{{end}}`, links, exe)
	// A cut of 3s: a probe of the isolated host's client waits out each
	// address it cannot reach, and on a loaded machine one begun in a
	// cut of 1.5s ended after its heal, so the cut saw no probe at all.
	src = strings.Replace(src, "duration = \"3s\"", "duration = \"5s\"", 1)
	src = strings.Replace(src, "for = \"1.5s\"", "for = \"3s\"", 1)
	src = strings.Replace(src, "[server]\n", "[server]\nnetwork = \""+network+"\"\n", 1)
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "probe.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// Clients live on hosts: a client on an isolated host reaches none of
// the majority's members, and a majority client does not reach the
// isolated member, through any address its adapter was given (every port
// of every member); each reaches its own host's member and, from the
// majority, the rest of the majority. Before the partition every address
// answers. The history records each operation's host. So on the proxy,
// under either links, and on coup's network where it can be had.
func TestClientsAreCutWithTheirHost(t *testing.T) {
	for _, links := range []string{scenario.LinksAddress, scenario.LinksProcess, scenario.NetworkNamespaces} {
		t.Run(links, func(t *testing.T) {
			network := scenario.NetworkProxy
			if links == scenario.NetworkNamespaces {
				if err := hostnet.Available(); err != nil {
					t.Skipf("coup's network cannot be made here: %v", err)
				}
				network, links = scenario.NetworkNamespaces, scenario.LinksAddress
			}
			sc := probeScenario(t, links, network)
			res, dir, err := Run(context.Background(), sc, Options{Store: t.TempDir()})
			if err != nil || res.NotStarted() {
				t.Fatalf("run: %v %+v", err, res)
			}
			h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var start, end int64 = -1, -1
			for e := range h.All() {
				if e.Kind == history.KindNemesis && start < 0 && e.Phase == "start" {
					start = e.Time
				}
				if e.Kind == history.KindNemesis && e.Phase == "end" {
					end = e.Time
				}
			}
			if start < 0 || end < 0 {
				t.Fatalf("no partition start and end in the history")
			}
			// The ports of each member: client, peer.
			all := "n1:++ n2:++ n3:++"
			want := map[string]string{"c1": "n1:++ n2:-- n3:--", "c2": "n1:-- n2:++ n3:++"}
			invoked := map[string]*history.Event{}
			seen := map[string]int{}
			for e := range h.All() {
				if e.Kind != history.KindOp {
					continue
				}
				if e.Type == history.OpInvoke {
					invoked[e.Process] = e
					continue
				}
				inv := invoked[e.Process]
				if wantHost := map[string]string{"c1": "n1", "c2": "n2"}[e.Process]; e.Host != wantHost || inv.Host != wantHost {
					t.Errorf("%s's operation recorded on host %q (invoked on %q), want %s", e.Process, e.Host, inv.Host, wantHost)
				}
				if e.Type != history.OpOK || e.F != "read" {
					continue
				}
				switch {
				case e.Time < start:
					seen[e.Process+" before"]++
					if !strings.Contains(e.Value, all) {
						t.Errorf("%s before the partition reached %q, want every address: %s", e.Process, e.Value, all)
					}
				case inv.Time > start && e.Time < end:
					seen[e.Process+" during"]++
					if !strings.Contains(e.Value, want[e.Process]) {
						t.Errorf("%s during the partition (%s to %s) reached %q, want %q", e.Process,
							time.Duration(inv.Time), time.Duration(e.Time), e.Value, want[e.Process])
					}
				}
			}
			for _, k := range []string{"c1 before", "c2 before", "c1 during", "c2 during"} {
				if seen[k] == 0 {
					t.Errorf("no probe of %s the partition (%v)", k, seen)
				}
			}
		})
	}
}

// An answer's served_by names a node directly, or by the server's own
// name for itself that the log patterns taught; an unknown name is kept
// as the server gave it, and an answer that names none, or a name too
// long to be one, records nothing.
func TestServedBy(t *testing.T) {
	r := &run{sc: &scenario.Scenario{Nodes: 3}}
	r.obs = newObserver(r)
	r.obs.names["8e9e05c52164694d"] = "n2"
	for _, tt := range []struct{ body, want string }{
		{`{"type":"read_ok","served_by":"8e9e05c52164694d"}`, "n2"},
		{`{"type":"read_ok","served_by":"n3"}`, "n3"},
		{`{"type":"read_ok","served_by":"ffff"}`, "ffff"},
		{`{"type":"read_ok"}`, ""},
		{`{"type":"read_ok","served_by":"` + strings.Repeat("x", maxServedBy+1) + `"}`, ""},
		{`[1,2]`, ""},
	} {
		if got := r.servedBy([]byte(tt.body)); got != tt.want {
			t.Errorf("servedBy(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
	if got := string(withServedBy([]byte(`{"type":"write_ok"}`), "n1")); got != `{"served_by":"n1","type":"write_ok"}` {
		t.Errorf("withServedBy: %s", got)
	}
}
