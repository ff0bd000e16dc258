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
// machine: the host's processes are held in a box (isolation.go) that
// one action freezes, thaws or kills at once, whatever they fork: a
// cgroup v2 group as root (hostcgroup.go), a PID namespace whose first
// process is coup's init as a user who is not root (hostns.go), else one
// process group (hostgroup.go). The run chooses the isolation once, as
// the scenario's isolation key asks, and refuses a run that needs more
// than the machine gives. A host elsewhere (over SSH, in a container)
// would be another implementation in a file of its own, chosen in
// newHost, with no caller changed. Every process a host runs starts
// through one method (box.launch): the one place where it is put into its
// cgroup or namespace, its user and its network namespace, and the run is
// told of each as it starts (hostEvents.launched), where what must hold
// for each process is added, such as a clock fault in force (clock.go),
// which reaches every process the host lists (Host.Pids).
//
// What it does, and nothing else, since the lifecycle does the rest:
//
//   - Start lays out loopback addresses (layout), starts each node's host
//     (its files and command lines written from the scenario's templates,
//     the server first and then each sidecar, each once the one it starts
//     after is ready, each process's output read line by line into its
//     own log), and waits until each process's ready probe answers (a
//     port, a command, an HTTP GET: probe.go). That moment is the run's
//     zero. It then waits, when the scenario asks (ready_state), until a
//     leader and its followers are seen (ready.go); the history records
//     when the cluster was first seen ready, whatever it waited for.
//   - Where network namespaces can be had (root; [server] network, chosen
//     in network.go), each host is a namespace of its own on coup's
//     network (servers/hostnet), with its own address (layout): every
//     packet between hosts, of any protocol, crosses coup, which asks
//     the nemesis, under the driver's lock, what becomes of it
//     (netPolicy); every process of the host starts inside it, and its
//     ready port, polls and clients dial from inside it (localHost's
//     enter and dial, run.dialer), so a connection is the host's by its
//     address. No proxy runs then. Elsewhere:
//   - Every peer connection crosses a fault proxy (servers/proxy), one per
//     directed link or one per server, which attributes it to an ordered
//     pair of nodes and asks the nemesis, under the driver's lock, what
//     becomes of each chunk (policy): a partition stalls or refuses, a loss
//     stalls then resets, a delay delays, a corruption flips bits.
//   - Process faults act on the whole host: crash kills its box and waits
//     until every process is gone, pause and resume freeze and thaw the
//     box, restart starts the host again on the same
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
// host (its box killed) and every proxy, and then removes coup's
// network, its namespaces with it. A Ctrl-C ends the run the same way, and the
// proc package's reaper kills what is left if coup itself is killed.
package servers
