// Package coup runs a Go state machine of your own under coup: in coup's
// deterministic simulator from your own go test, over a thousand seeds in
// seconds, with the same faults, history, checks, verdict, store folder
// and report as coup sim, a failing seed replayed exactly and shrunk to a
// small scenario; and as a real node process under coup run, from the
// same code.
//
// A Machine reacts to one input at a time (Start, then Receive, Timeout,
// Request) and acts only through its Env; it reports whom it trusts as
// leader, in which term, with Env.Report, and the checks judge those
// reports and the clients' operations. A Node says how to build it and
// which messages it sends:
//
//	var Node = coup.Node{
//		Name:     "mine",
//		New:      func(p *coup.Params) (coup.Machine, error) { return &machine{}, p.Unused() },
//		Messages: []coup.Msg{Ping{}, Pong{}},
//	}
//
// A test sweeps a scenario's seeds with it; a seed whose outcome is not
// the one the scenario expects fails the test with its verdict, its store
// folder and the command that replays it:
//
//	func TestLeaderIsolated(t *testing.T) {
//		sc, err := coup.Load("testdata/leader-isolated.toml")
//		if err != nil {
//			t.Fatal(err)
//		}
//		coup.Test(t, sc, Node, coup.Options{Seeds: 1000})
//	}
//
//	--- FAIL: TestLeaderIsolated
//	    coup: leader-isolated, seed 17: valid=false, not as expected (3 of 1000 seeds from 1: 17, 402, 877)
//	      kv-linearizable false ...
//	      store: store/leader-isolated/20260101T120000.000Z (report.html, history.jsonl, results.json)
//	      replay: COUP_SEED=17 go test -run '^TestLeaderIsolated$' ./mine
//	      shrink: COUP_SEED=17 COUP_SHRINK=1 go test -run '^TestLeaderIsolated$' ./mine
//
// The environment steers Test without a change to the test: COUP_SEED=S
// runs seed S alone and saves it, COUP_SEEDS=N sweeps N seeds,
// COUP_SHRINK=1 shrinks the first seed not as expected into a scenario
// file, COUP_STORE=DIR moves the store. Run does the same from plain code
// and returns the Result.
//
// A scenario (Scenario; Load reads a file, docs/scenarios.md gives every
// key) is the same as for coup run, but for the nodes: it names no
// built-in algorithm, and any workload is served (lin-kv's read, write
// and cas included). Given a command, it also runs under coup run, where
// the command is a program whose main is one line:
//
//	func main() { coup.Serve(mine.Node) }
//
// examples/raft wraps etcd's raft library (RawNode) as a Machine this way,
// and docs/library.md walks through it, from go get to a failing seed
// replayed in your own test.
package coup
