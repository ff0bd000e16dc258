// Package bench is coup's benchmark (`coup bench`): how fast the harness
// carries messages against the floor of a minimal relay, how fast it
// starts many nodes and how much memory they take, and how fast a large
// history is read and checked.
//
// The router part runs a probe node program (ProbeMain, the hidden command
// "coup bench-probe") as two processes: the first node of init's node_ids
// pings the second, which echoes every ping. The pinger measures the round
// trips itself and hands its Figures to the benchmark through a named
// pipe, outside the path it measures. The same probe runs on three paths,
// taking turns within each round so that the machine's noise hits them
// alike:
//
//   - the relay: a parent that copies each line one child writes to the
//     other's stdin (two goroutines, buffered, flushed when nothing more
//     waits), with the fault mix applied by a timer per copy when asked;
//   - coup: harness.Run (the pipe driver) on a scenario whose nodes are the probe (a
//     foreign command), latency 0, messages not recorded;
//   - coup, recorded: the same with every message recorded.
//
// The probe runs pipelined (Window pings outstanding: round trips per
// second), one at a time (each round trip's time), and at a steady rate
// (each round trip's time while pings go out on a clock, whatever comes
// back). With loss, the pinger gives a ping up after a retransmission
// timeout computed as TCP does.
//
// The proxy part measures the real-server driver's fault proxy
// (servers/proxy) over TCP: a client in this process and an echo server
// (the hidden command "coup bench-probe tcp-echo") talk directly, through
// a plain forwarder process ("tcp-forward": a read and a write per chunk,
// nothing else) and through the proxy in a process of its own
// ("tcp-proxy", a policy with no fault in force), pipelined and one at a
// time, the paths taking turns within each round.
//
// The startup part runs `coup run` as a child process on many built-in
// nodes and reads /proc for the time until it says they are all up, the
// peak RSS of the harness and of each node while they run an election,
// and any node left alive after it ends. The history part simulates a long
// run with every message recorded (about Config.Events events), then reads
// it, reads and checks it in this process (time, and heap per event), and
// runs `coup check` on it as a child process (time and peak RSS).
//
// The episodes part runs a short etcd scenario and a short ZooKeeper
// scenario (a lin-kv workload and a pause once the cluster has elected)
// a few times with a fresh cluster per run (servers.Run), then as many
// times as episodes of one cluster (servers.Session), and gives the runs
// per hour of each way and their ratio.
//
// Run measures; Results.Print writes the table. Nothing here asserts a
// speed: the table marks the targets met or not, and the figures are for
// people to compare, in one run, on one machine.
package bench
