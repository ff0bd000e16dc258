// Package servers is the real-server driver: the third driver of the run
// lifecycle (package lifecycle), beside the pipe driver (harness) and the
// simulator (sim). It runs unmodified servers (etcd, ZooKeeper, a TCP
// service of the user's own) as the nodes of a scenario whose [server]
// table describes them (scenario.Server).
//
// What it does, and nothing else, since the lifecycle does the rest:
//
//   - Start lays out loopback addresses (layout), writes each server's
//     files and command line from the scenario's templates, starts each in
//     a process group of its own with its output read line by line into
//     its log, and waits until each accepts connections on its ready port.
//     That moment is the run's zero.
//   - Every peer connection crosses a fault proxy (servers/proxy), one per
//     directed link or one per server, which attributes it to an ordered
//     pair of nodes and asks the nemesis, under the driver's lock, what
//     becomes of each chunk (policy): a partition stalls or refuses, a loss
//     stalls then resets, a delay delays, a corruption flips bits.
//   - Process faults are signals: crash is SIGKILL and a wait for the exit,
//     pause and resume are SIGSTOP and SIGCONT to the group, restart starts
//     the server on the same data, and replace (nemesis.Replacer) wipes the
//     data, runs the scenario's replace command and starts it as a member
//     joining a running cluster.
//   - The observer turns log lines and polled answers into leader reports
//     with terms, the reports every election check already reads. Each
//     node is polled by a loop of its own (poll.go), every PollEvery,
//     each question within its timeout; every question is counted by how
//     it ended (answered, unanswered, failed) and every round skipped
//     while the node is down, into the end event's counters.
//   - The clients carry the workload over the servers' own protocols:
//     lin-kv, sets (set.go: a key or znode per element) and locks on etcd
//     (its JSON gateway) and ZooKeeper (its protocol, and its lock
//     recipe), inside coup, or as processes of
//     their own (adapters: coup adapter etcd, served by ServeClient, or a
//     scenario's adapter for a service of the user's own), which speak
//     coup's client protocol on stdin and stdout and which a pause of the
//     lock's holder stops.
//
// Stop stops everything by pid: the polls, the client processes, every
// server (SIGKILL to its group) and every proxy. A Ctrl-C ends the run the same way, and the
// proc package's reaper kills what is left if coup itself is killed.
package servers
