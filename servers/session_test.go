package servers

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/scenario"
)

// Three episodes on one real etcd cluster: each has its own history
// (one meta event first, one end event last, its own operations) and its
// own verdict; the cluster's processes are the same in every episode;
// the clients' keys of each episode are under its own prefix and nothing
// else is in etcd; after Close no server is left and the cluster's
// folder is gone.
func TestEpisodesOnOneEtcdCluster(t *testing.T) {
	needsServer(t, "etcd")
	src := `name = "episodes"
nodes = 3
duration = "3500ms"
recovery = "500ms"

[server]
preset = "etcd"

[workload]
kind = "lin-kv"
at = "2500ms"     # once etcd has elected, in the first episode too
clients = 2
rate = 20
keys = 2
values = 5

[[faults]]
kind = "pause"
target = "n2"
at = "2700ms"
for = "400ms"

[checks]
run = ["kv-linearizable", "one-leader-per-term"]
`
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "episodes.toml"), src)
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	s := NewSession(Options{Store: store}, 0)
	defer s.Close()
	ctx := context.Background()
	var pids []int
	var dirs []string
	for ep := 1; ep <= 3; ep++ {
		res, dir, err := s.Run(ctx, sc)
		if err != nil {
			t.Fatalf("episode %d: %v", ep, err)
		}
		if res.NotStarted() {
			t.Fatalf("episode %d did not start: %s", ep, res.Error)
		}
		if slices.Contains(dirs, dir) {
			t.Fatalf("episode %d stored in %s, an earlier episode's folder", ep, dir)
		}
		dirs = append(dirs, dir)
		for _, name := range []string{"kv-linearizable", "one-leader-per-term"} {
			if _, ok := res.Checks[name]; !ok {
				t.Errorf("episode %d: %s was not judged: %v", ep, name, res.Order)
			}
		}
		if res.Valid.String() != "true" {
			t.Errorf("episode %d: valid %s, want true (%s)", ep, res.Valid, res.Headline)
		}
		h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []history.Kind
		metas, ends, ops, starts := 0, 0, 0, 0
		for e := range h.All() {
			kinds = append(kinds, e.Kind)
			switch {
			case e.Kind == history.KindMeta:
				metas++
			case e.Kind == history.KindEnd:
				ends++
			case e.Kind == history.KindOp:
				ops++
			case e.Kind == history.KindProcess && e.What == history.ProcStart:
				starts++
			}
		}
		if metas != 1 || kinds[0] != history.KindMeta || ends != 1 || kinds[len(kinds)-1] != history.KindEnd {
			t.Errorf("episode %d: %d meta and %d end events, first %s, last %s: want one each, first and last", ep, metas, ends, kinds[0], kinds[len(kinds)-1])
		}
		if ops == 0 || starts != 3 {
			t.Errorf("episode %d: %d operations and %d process starts, want some and 3", ep, ops, starts)
		}
		var now []int
		for _, srv := range s.r.servers {
			now = append(now, srv.pid())
		}
		if pids == nil {
			pids = now
		} else if !slices.Equal(pids, now) {
			t.Errorf("episode %d ran on servers %v, episode 1 on %v: want the same processes", ep, now, pids)
		}
	}
	if s.Clusters() != 1 {
		t.Errorf("%d clusters started for 3 episodes, want 1", s.Clusters())
	}

	// Every key in etcd is under an episode's prefix, and each episode
	// wrote some.
	c := newEtcdKV(map[string]string{"n1": s.r.layout.nodes[0].Addr["client"]}, false)
	if s.r.net != nil {
		c.setDial(s.r.dialer("n1")) // from n1's namespace: the address is nowhere else
	}
	var out struct {
		Kvs []struct {
			Key string `json:"key"`
		} `json:"kvs"`
	}
	all := map[string]any{"key": b64("\x00"), "range_end": b64("\x00"), "keys_only": true}
	if err := c.call(ctx, "n1", "kv/range", all, &out); err != nil {
		t.Fatal(err)
	}
	byPrefix := map[string]int{}
	for _, kv := range out.Kvs {
		k, _ := base64.StdEncoding.DecodeString(kv.Key)
		prefix, _, _ := strings.Cut(string(k), "-coup-kv/")
		byPrefix[prefix]++
	}
	for _, p := range []string{"e1", "e2", "e3"} {
		if byPrefix[p] == 0 {
			t.Errorf("no key under %s-: %v", p, byPrefix)
		}
		delete(byPrefix, p)
	}
	if len(byPrefix) > 0 {
		t.Errorf("keys under no episode's prefix: %v", byPrefix)
	}

	cluster := s.dir
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("server pid %d still running after Close", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if _, err := os.Stat(cluster); !os.IsNotExist(err) {
		t.Errorf("the cluster's folder %s is still there after Close (%v)", cluster, err)
	}
}

// A cluster serves a scenario that differs in its faults, seed and
// timing, read anew; not one with other servers, nodes or clients.
func TestSameCluster(t *testing.T) {
	base := `name = "a"
nodes = 3
duration = "2s"
[server]
preset = "etcd"
[workload]
kind = "lin-kv"
clients = 2
`
	parse := func(src string) *scenario.Scenario {
		t.Helper()
		sc, err := scenario.Parse(filepath.Join(t.TempDir(), "a.toml"), src)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	a := parse(base)
	for _, c := range []struct {
		src  string
		same bool
	}{
		{base, true},
		{strings.Replace(base, `duration = "2s"`, "duration = \"3s\"\nseed = 9\n[[faults]]\nkind = \"pause\"\ntarget = \"n1\"\nat = \"1s\"\nfor = \"1s\"", 1), true},
		{strings.Replace(base, "nodes = 3", "nodes = 5", 1), false},
		{strings.Replace(base, `preset = "etcd"`, "preset = \"etcd\"\nreads = \"serializable\"", 1), false},
		{strings.Replace(base, "clients = 2", "clients = 3", 1), false},
	} {
		if got := sameCluster(a, parse(c.src)); got != c.same {
			t.Errorf("sameCluster = %v, want %v, for\n%s", got, c.same, c.src)
		}
	}
}

// A cluster that has not recovered within the timeout is closed, every
// process of it stopped, and the next episode runs on a fresh one: here
// a server killed between episodes, started again by the session, is not
// seen to follow its leader within a millisecond.
func TestEpisodesFallBackToAFreshCluster(t *testing.T) {
	needsServer(t, "etcd")
	sc, err := scenario.Parse(filepath.Join(t.TempDir(), "fallback.toml"), `name = "fallback"
nodes = 3
duration = "500ms"
recovery = "200ms"

[server]
preset = "etcd"

[checks]
run = ["one-leader-per-term"]
`)
	if err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	s := NewSession(Options{Store: t.TempDir()}, time.Millisecond)
	s.Notes = &notes
	defer s.Close()
	ctx := context.Background()
	if res, _, err := s.Run(ctx, sc); err != nil || res.NotStarted() {
		t.Fatalf("episode 1: %v %v", err, res)
	}
	var first []int
	for _, srv := range s.r.servers {
		first = append(first, srv.pid())
	}
	syscall.Kill(-first[1], syscall.SIGKILL) // n2's host, by its group, as a crash would
	select {
	case <-s.r.down: // the run has seen it go
	case <-time.After(10 * time.Second):
		t.Fatal("n2's end was not seen")
	}
	res, _, err := s.Run(ctx, sc)
	if err != nil || res.NotStarted() {
		t.Fatalf("episode 2: %v %v", err, res)
	}
	if s.Clusters() != 2 || !strings.Contains(notes.String(), "did not recover") {
		t.Errorf("%d clusters, notes %q: want a second cluster, and why", s.Clusters(), notes.String())
	}
	for _, pid := range first {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("pid %d of the first cluster still running", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
