// Package raftkv is etcd's raft library (go.etcd.io/raft/v3) under coup:
// a RawNode wrapped as a coup Machine that serves Maelstrom's lin-kv
// workload, so that coup's simulator sweeps it over a thousand seeds from
// go test, and coup run runs the same code as real processes
// (../main.go: coup.Serve(raftkv.Node)).
//
// The wrapper is the application raft's doc.go asks for, on coup's Env:
//
//   - Messages: every raft message a Ready hands out is encoded
//     (protobuf) into a Msg and sent with Env.Send; a Msg received is
//     decoded and stepped (RawNode.Step). The body's type is the raft
//     message's ("MsgApp", "MsgHeartbeat"), so histories count each kind.
//   - Ready: after every input, until HasReady is false: report a changed
//     belief, append entries and hard state to a MemoryStorage, send the
//     messages, apply the committed entries to the store, answer the
//     reads whose index is applied, Advance.
//   - Reports: whom the node follows and its term, from raft's soft state
//     (BasicStatus: Lead, Term), as a leader report with a term, before
//     any message of the Ready that changed it: one-leader-per-term and
//     stale-leader judge these.
//   - Clients: a write or cas is proposed (RawNode.Propose) as a JSON op
//     naming its proposer, and answered by the proposer when it applies
//     the entry; a read asks for a read index (RawNode.ReadIndex,
//     ReadOnlySafe) and is answered from the store once that index is
//     applied. With no leader known, an operation fails at once,
//     definitely.
//   - Time: ticks come from a timer (parameter tick, 10ms by default),
//     but only a leader ticks (for its heartbeats), and a node that does
//     not lead starts an election (RawNode.Campaign) when its own election
//     timer fires: raft draws its randomized election timeout from
//     crypto/rand, which no seed replays, so the wrapper draws it instead,
//     from Env.Rand, in raft's range, [election_ticks, 2·election_ticks)
//     ticks, and restarts it when the leader it follows is heard from or
//     when it grants a vote, as raft's ticks would. So a seed gives one
//     history. For the same reason CheckQuorum and PreVote are off (both
//     need a follower's ticks): an isolated leader goes on believing it
//     leads until it hears of a higher term, and two leaders in different
//     terms overlap, which is what raft promises.
//   - The log is in memory: a restart loses it, as coup's restart loses a
//     process's state. The term and vote go to the node's coup.Storage
//     (file "vote"), synced before any message of the Ready that changed
//     them, and are read back at the next start, so that a node never
//     votes twice in a term, whatever a power failure takes. Raft assumes
//     its log durable too, so scenarios with crashes test more than the
//     vote.
//
// UnsyncedVote writes the term and vote and never syncs them: under power
// failures (vote-unsynced.toml) a vote is taken back and two nodes lead
// one term.
//
// Broken is the same machine with one bug, the one this example exists
// to show: a node that believes it leads answers reads from its own copy,
// without ReadIndex or a lease. With its leader isolated, the old leader
// serves values the majority has since overwritten, and kv-linearizable
// fails at almost every seed.
package raftkv
