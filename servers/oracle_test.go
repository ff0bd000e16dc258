package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/scenario"
	"github.com/jackc/pgx/v5"
)

// These tests check each preset's observer against the server's own
// answer: while a catalogue scenario's fault is in force, a sampler asks
// every node, from inside its host, a question coup's observer does not
// ask (etcd's maintenance status, Redis's ROLE, PostgreSQL's
// pg_is_in_recovery(), the address on keepalived's interface, …), and
// the beliefs coup recorded are compared with those answers afterwards:
// every claim coup recorded is confirmed by the server within the
// sampler's and the observer's resolution, no sample contradicts a
// claim inside it, and every leader the server named was seen by coup.

// oracle asks one node whether it leads, by the server's own answer: ok
// is false when it gave none (refused, timed out, shutting down).
type oracle func(ctx context.Context, r *run, node string) (leads, ok bool)

// sample is one answer of an oracle.
type sample struct {
	at    time.Duration
	node  string
	leads bool
}

// oracleEvery is how often the sampler asks each node.
const oracleEvery = 150 * time.Millisecond

// sampled runs the catalogue's scenario file with an oracle asked of
// every node beside the run, and returns the history and the samples.
func sampled(t *testing.T, file string, ask oracle) (*history.History, []sample) {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("..", "scenarios", file))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var samples []sample
	sampler := func(r *run) {
		tick := time.NewTicker(oracleEvery)
		defer tick.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-tick.C:
			}
			var wg sync.WaitGroup
			for _, s := range r.servers {
				if up, _, _ := r.obs.asking(s.id); !up {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					at := r.Now()
					if leads, ok := ask(ctx, r, s.id); ok {
						mu.Lock()
						samples = append(samples, sample{at: at, node: s.id, leads: leads})
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		}
	}
	// A short store: PostgreSQL's socket in a host's folder must stay
	// within a Unix socket's 107 bytes, which t.TempDir's path passes.
	store, err := os.MkdirTemp("", "oracle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	os.Chmod(store, 0o755) // a host that runs as another user (Patroni's postgres) reaches its folder
	h, _ := runWith(t, sc, Options{Store: store, sampler: sampler})
	mu.Lock()
	defer mu.Unlock()
	return h, samples
}

// span is a claim coup recorded: node believed it led from from to to.
type span struct {
	node     string
	from, to time.Duration
	report   *history.Event
}

// claimSpans are the claims of a history: from a report that the node
// leads to its next report, its crash or stop, or the end.
func claimSpans(h *history.History) []span {
	var out []span
	open := map[string]*span{}
	var last time.Duration
	closeAt := func(node string, at time.Duration) {
		if c := open[node]; c != nil {
			c.to = at
			out = append(out, *c)
			delete(open, node)
		}
	}
	for e := range h.All() {
		last = e.Duration()
		switch {
		case e.Kind == history.KindProcess && e.What != history.ProcPause && e.What != history.ProcResume:
			closeAt(e.Node, e.Duration())
		case e.Kind == history.KindReport && e.What == history.ReportLeader:
			closeAt(e.Node, e.Duration())
			if e.Value == e.Node {
				open[e.Node] = &span{node: e.Node, from: e.Duration(), report: e}
			}
		}
	}
	for n := range open {
		closeAt(n, last)
	}
	return out
}

// compare holds coup's beliefs to the samples, within slack (the
// observer's and the sampler's resolution, and the machine's lateness):
// it fails the test for each disagreement (disagreements) and logs the
// figures.
func compare(t *testing.T, h *history.History, samples []sample, slack time.Duration) {
	t.Helper()
	problems, figures := disagreements(h, samples, slack)
	for _, p := range problems {
		t.Error(p)
	}
	t.Log(figures)
}

// oracleLag is how much later than coup's observer the sampler may see
// a change: a claim's first moments may still read as the old state.
const oracleLag = 300 * time.Millisecond

// disagreements lists where coup's beliefs and the samples disagree: a
// claim that no sample within slack of it confirmed, when it lasted
// longer than slack or samples inside it said the node did not lead; a
// claim that samples inside it contradicted; a leader the server named
// that coup never saw lead near that time.
func disagreements(h *history.History, samples []sample, slack time.Duration) (problems []string, figures string) {
	claims := claimSpans(h)
	confirmed := 0
	for _, c := range claims {
		seen, contradicted := false, 0
		for _, s := range samples {
			if s.node != c.node {
				continue
			}
			if s.leads && s.at >= c.from-slack && s.at <= c.to+slack {
				seen = true
			}
			if !s.leads && s.at > c.from+oracleLag && s.at < c.to {
				contradicted++
			}
		}
		switch {
		case !seen && (contradicted > 0 || c.to-c.from > slack):
			problems = append(problems, fmt.Sprintf("coup recorded %s leading from %v to %v, and the server never said it led then (%d samples inside it said it did not; evidence %+v)",
				c.node, c.from, c.to, contradicted, c.report.Evidence))
		case contradicted > 0 && c.to-c.from > 2*slack && contradicted*int(oracleEvery) > int(slack):
			problems = append(problems, fmt.Sprintf("coup recorded %s leading from %v to %v, but the server said %d times inside it that it did not lead (evidence %+v)",
				c.node, c.from, c.to, contradicted, c.report.Evidence))
		default:
			confirmed++ // confirmed, or shorter than the sampler can see
		}
	}
	unseen, leaderSamples := 0, 0
	for _, s := range samples {
		if !s.leads {
			continue
		}
		leaderSamples++
		ok := false
		for _, c := range claims {
			if c.node == s.node && s.at >= c.from-slack && s.at <= c.to+slack {
				ok = true
				break
			}
		}
		if !ok {
			unseen++
			if unseen <= 3 {
				problems = append(problems, fmt.Sprintf("the server said %s led at %v, and coup never saw it lead near then", s.node, s.at))
			}
		}
	}
	if len(claims) == 0 || leaderSamples == 0 {
		problems = append(problems, fmt.Sprintf("%d claims recorded and %d samples naming a leader: nothing to compare", len(claims), leaderSamples))
	}
	return problems, fmt.Sprintf("claims recorded %d, confirmed %d, not %d; %d of %d samples naming a leader seen by coup",
		len(claims), confirmed, len(claims)-confirmed, leaderSamples-unseen, leaderSamples)
}

// The comparison finds what the Patroni bug was: a demoted primary read
// as leading for under a second while PostgreSQL said it was in
// recovery; and it passes a claim the server confirms.
func TestDisagreementsFindAClaimTheServerDenies(t *testing.T) {
	term := func(n int64) *int64 { return &n }
	h, err := history.FromEvents([]history.Event{
		{Index: 0, Kind: history.KindMeta, Meta: &history.Meta{Scenario: "patroni", Algorithm: "patroni", Nodes: []string{"n1", "n2"}, IDs: []int{1, 2}}},
		{Index: 0, Kind: history.KindProcess, Node: "n1", What: history.ProcStart},
		{Index: 1, Kind: history.KindProcess, Node: "n2", What: history.ProcStart},
		{Index: 2, Time: int64(1 * time.Second), Kind: history.KindReport, Node: "n2", What: history.ReportLeader, Value: "n2", Term: term(2)},
		{Index: 3, Time: int64(10 * time.Second), Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n1", Term: term(1)},
		{Index: 4, Time: int64(10*time.Second + 800*time.Millisecond), Kind: history.KindReport, Node: "n1", What: history.ReportLeader, Value: "n2", Term: term(2)},
		{Index: 5, Time: int64(20 * time.Second), Kind: history.KindEnd},
	})
	if err != nil {
		t.Fatal(err)
	}
	var samples []sample
	for at := time.Duration(0); at < 20*time.Second; at += oracleEvery {
		samples = append(samples, sample{at: at, node: "n1", leads: false}, sample{at: at, node: "n2", leads: at >= time.Second})
	}
	problems, _ := disagreements(h, samples, 1500*time.Millisecond)
	if len(problems) != 1 || !strings.Contains(problems[0], "coup recorded n1 leading from 10s to 10.8s") {
		t.Errorf("disagreements %q, want the one about n1's claim from 10s to 10.8s", problems)
	}
	for i := range samples {
		if samples[i].node == "n1" && samples[i].at >= 10*time.Second && samples[i].at < 10*time.Second+800*time.Millisecond {
			samples[i].leads = true
		}
	}
	if problems, _ := disagreements(h, samples, 1500*time.Millisecond); len(problems) != 0 {
		t.Errorf("disagreements %q once the server confirms n1's claim, want none", problems)
	}
}

// faultInForce fails the test when no sample was taken while a fault was
// in force: the comparison must cover one.
func faultInForce(t *testing.T, h *history.History, samples []sample) {
	t.Helper()
	var from, to time.Duration
	for e := range h.All() {
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseStart && from == 0 {
			from = e.Duration()
		}
		if e.Kind == history.KindNemesis && e.Phase == history.PhaseEnd {
			to = e.Duration()
		}
	}
	for _, s := range samples {
		if from > 0 && s.at > from && s.at < to {
			return
		}
	}
	t.Fatalf("no sample while a fault was in force (%v to %v)", from, to)
}

// httpFrom asks url from inside node's host.
func httpFrom(ctx context.Context, r *run, node, method, url, body string) ([]byte, bool) {
	client := &http.Client{Transport: &http.Transport{DialContext: r.dialer(node), DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return b, err == nil && resp.StatusCode/100 == 2
}

// etcd's own answer: its maintenance status (the JSON gateway of its
// Status RPC), whose header names the member and whose leader field its
// leader: it leads when the two are one.
func etcdOracle(ctx context.Context, r *run, node string) (bool, bool) {
	b, ok := httpFrom(ctx, r, node, http.MethodPost, "http://"+r.byID[node].data.Addr["client"]+"/v3/maintenance/status", "{}")
	if !ok {
		return false, false
	}
	var st struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
		Leader string `json:"leader"`
	}
	if json.Unmarshal(b, &st) != nil || st.Header.MemberID == "" {
		return false, false
	}
	return st.Leader == st.Header.MemberID, true
}

func TestEtcdObserverAgreesWithTheServer(t *testing.T) {
	needsServer(t, "etcd")
	h, samples := sampled(t, "etcd-leader-isolated.toml", etcdOracle)
	faultInForce(t, h, samples)
	compare(t, h, samples, time.Second)
}

// tcpFrom writes send to addr from inside node's host and reads the
// answer until the server closes (or within the context).
func tcpFrom(ctx context.Context, r *run, node, addr, send string) ([]byte, bool) {
	c, err := r.dialer(node)(ctx, "tcp", addr)
	if err != nil {
		return nil, false
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	}
	if _, err := io.WriteString(c, send); err != nil {
		return nil, false
	}
	b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
	return b, len(b) > 0
}

// ZooKeeper's own answer: mntr's zk_server_state (the preset reads srvr
// and a file).
func zookeeperOracle(ctx context.Context, r *run, node string) (bool, bool) {
	b, ok := tcpFrom(ctx, r, node, r.byID[node].data.Addr["client"], "mntr")
	if !ok {
		return false, false
	}
	m := regexp.MustCompile(`zk_server_state\s+([a-z]+)`).FindSubmatch(b)
	if m == nil {
		return false, false
	}
	return string(m[1]) == "leader", true
}

func TestZooKeeperObserverAgreesWithTheServer(t *testing.T) {
	needsServer(t, "zookeeper")
	h, samples := sampled(t, "zookeeper-leader-isolated.toml", zookeeperOracle)
	faultInForce(t, h, samples)
	compare(t, h, samples, time.Second)
}

// Redis's own answer: ROLE (the preset reads INFO replication and
// Sentinel).
func redisOracle(ctx context.Context, r *run, node string) (bool, bool) {
	b, ok := tcpFrom(ctx, r, node, r.byID[node].data.Addr["client"], "ROLE\r\nQUIT\r\n")
	if !ok || !bytes.HasPrefix(b, []byte("*")) {
		return false, false
	}
	return bytes.Contains(b, []byte("\r\nmaster\r\n")), true
}

func TestRedisObserverAgreesWithTheServer(t *testing.T) {
	needsServer(t, "redis-sentinel")
	h, samples := sampled(t, "redis-sentinel-master-isolated.toml", redisOracle)
	faultInForce(t, h, samples)
	compare(t, h, samples, time.Second)
}

// PostgreSQL's own answer under Patroni: pg_is_in_recovery() (the
// preset reads Patroni's REST API): a primary is out of recovery.
func patroniOracle(ctx context.Context, r *run, node string) (bool, bool) {
	cfg, err := pgConfig("postgres://"+pgUser+":"+pgPassword+"@"+r.byID[node].data.Addr["postgres"]+"/"+pgDatabase+"?sslmode=disable", r.dialer(node))
	if err != nil {
		return false, false
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, false
	}
	defer conn.Close(context.Background())
	var inRecovery bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil {
		return false, false
	}
	return !inRecovery, true
}

func TestPatroniObserverAgreesWithTheServer(t *testing.T) {
	needsServer(t, "patroni")
	if os.Geteuid() != 0 {
		t.Skip("needs root: its hosts are on coup's network as root")
	}
	h, samples := sampled(t, "patroni-primary-isolated.toml", patroniOracle)
	faultInForce(t, h, samples)
	compare(t, h, samples, 1500*time.Millisecond)
}

// NATS's own answer: the stream's cluster leader in /jsz's account
// details, read without /raftz (coup's reader takes the leader and term
// from /raftz): it leads when it names this server (the preset's
// server_name is the node's id).
func natsOracle(ctx context.Context, r *run, node string) (bool, bool) {
	b, ok := httpFrom(ctx, r, node, http.MethodGet, "http://"+r.byID[node].data.Addr["monitor"]+"/jsz?accounts=true&streams=true", "")
	if !ok {
		return false, false
	}
	var jsz struct {
		Accounts []struct {
			Streams []struct {
				Cluster struct {
					Leader string `json:"leader"`
				} `json:"cluster"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if json.Unmarshal(b, &jsz) != nil {
		return false, false
	}
	for _, a := range jsz.Accounts {
		for _, s := range a.Streams {
			if s.Cluster.Leader != "" {
				return s.Cluster.Leader == node, true // the preset's server_name
			}
		}
	}
	return false, false
}

func TestNatsObserverAgreesWithTheServer(t *testing.T) {
	needsServer(t, "nats")
	h, samples := sampled(t, "nats-stream-leader-isolated.toml", natsOracle)
	faultInForce(t, h, samples)
	compare(t, h, samples, time.Second)
}

// keepalived's own answer: whether the virtual address is on the host's
// interface (the scenario reads keepalived's log).
func keepalivedOracle(vip string) oracle {
	return func(ctx context.Context, r *run, node string) (bool, bool) {
		var out []byte
		err := r.enter(node)(func() error {
			var err error
			out, err = exec.CommandContext(ctx, "ip", "-o", "addr", "show").Output()
			return err
		})
		if err != nil {
			return false, false
		}
		return bytes.Contains(out, []byte(" "+vip+"/")), true
	}
}

func TestKeepalivedObserverAgreesWithTheServer(t *testing.T) {
	needs.Program(t, "keepalived", "keepalived")
	if os.Geteuid() != 0 {
		t.Skip("needs root: its hosts are on coup's network as root")
	}
	sc, err := scenario.Load(filepath.Join("..", "scenarios", "keepalived-master-isolated.toml"))
	if err != nil {
		t.Fatal(err)
	}
	vip := regexp.MustCompile(`(?m)^\s*([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+)(/[0-9]+)?\s*$`).FindStringSubmatch(strings.Join(mapValues(sc.Server.Files), "\n"))
	if vip == nil {
		t.Fatal("no virtual address found in the scenario's keepalived.conf")
	}
	h, samples := sampled(t, "keepalived-master-isolated.toml", keepalivedOracle(vip[1]))
	faultInForce(t, h, samples)
	compare(t, h, samples, time.Second)
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
