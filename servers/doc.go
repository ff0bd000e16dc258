// Package servers is the real-server driver: the third driver of the run
// lifecycle (package lifecycle), beside the pipe driver (harness) and the
// simulator (sim). It runs unmodified servers (etcd, ZooKeeper, Redis with
// Sentinel, a TCP service of the user's own) as the nodes of a scenario
// whose [server] table describes them (scenario.Server).
//
// A node is a host: its server and its sidecars (Sentinel beside Redis,
// an agent), which start, crash, pause, resume, restart and are replaced
// together. The run knows a host only through the Host interface
// (host.go); localHost (hostlocal.go) is the one implementation, on this
// machine: the host's processes share one process group, led by the
// server, so that one signal reaches them all at once. A host elsewhere
// (over SSH, in a container) would be another implementation in a file
// of its own, chosen in newHost, with no caller changed. Every process a
// host runs starts through one function (localHost.launch), and the run
// is told of each as it starts (hostEvents.launched): the place where what
// must hold for each process is added, such as a clock fault in force
// (clock.go), which reaches every process of the host's group.
//
// What it does, and nothing else, since the lifecycle does the rest:
//
//   - Start lays out loopback addresses (layout), starts each node's host
//     (its files and command lines written from the scenario's templates,
//     the server first and then each sidecar, each process's output read
//     line by line into its own log), and waits until each process
//     accepts connections on its ready port. That moment is the run's
//     zero. It then waits, when the scenario asks (ready_state), until a
//     leader and its followers are seen (ready.go); the history records
//     when the cluster was first seen ready, whatever it waited for.
//   - Every peer connection crosses a fault proxy (servers/proxy), one per
//     directed link or one per server, which attributes it to an ordered
//     pair of nodes and asks the nemesis, under the driver's lock, what
//     becomes of each chunk (policy): a partition stalls or refuses, a loss
//     stalls then resets, a delay delays, a corruption flips bits.
//   - Process faults act on the whole host: crash is SIGKILL to its group
//     and a wait until every process is gone, pause and resume are SIGSTOP
//     and SIGCONT to the group, restart starts the host again on the same
//     data, and replace (nemesis.Replacer) wipes the data, runs the
//     scenario's replace command and starts it as a member joining a
//     running cluster.
//   - The observer turns log lines and polled answers, the server's and
//     its sidecars', into leader reports with terms, the reports every
//     election check already reads; a poll may name a built-in reader of
//     its answer in place of patterns (poll.go's pollReaders: NATS's /jsz
//     and /raftz, natsobserve.go). Each node is polled by a loop of its
//     own (poll.go), every PollEvery, each question within its timeout;
//     every question is counted by how it ended (answered, unanswered,
//     failed) and every round skipped while the node is down, into the end
//     event's counters.
//   - The clients carry the workload over the servers' own protocols:
//     lin-kv, sets (set.go: a key or znode per element) and locks on etcd
//     (its JSON gateway) and ZooKeeper (its protocol, and its lock
//     recipe), lin-kv on Redis through Sentinel (redis.go), sets on NATS
//     JetStream (nats.go: a publish per add, and the stream, which the
//     client makes before the cluster is watched, read back), inside coup,
//     or as processes of their own (adapters: coup adapter etcd, served by ServeClient, or a
//     scenario's adapter for a service of the user's own), which speak
//     coup's client protocol on stdin and stdout and which a pause of the
//     lock's holder stops.
//
// A preset whose server coup builds from its source ([server] version:
// nats-server) is built before anything starts, on first use, into
// coup's cache (natsbuild.go).
//
// A Session (session.go) keeps one cluster for many runs, each an
// episode with its own history, nemesis, clients (their keys under the
// episode's prefix) and verdict: the run's Stop then ends only the
// clients, the cluster recovers between episodes, and the Session's
// Close does what Stop does below.
//
// Stop stops everything by pid: the polls, the client processes, every
// host (SIGKILL to its group) and every proxy. A Ctrl-C ends the run the same way, and the
// proc package's reaper kills what is left if coup itself is killed.
package servers
