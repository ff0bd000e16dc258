package raftkv

import (
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/coupharness/coup"
	"github.com/coupharness/coup/nodes"
)

// Node is the raft key-value store as coup runs it, in the simulator and
// as a real node (coup.Serve).
var Node = coup.Node{Name: "raft", New: New, Messages: messages()}

// Broken is the same store with the bug examples/raft exists to find: a
// node that believes it leads answers reads from its own copy at once,
// without ReadIndex and without a lease, so a leader cut off from the
// others answers what the majority has since overwritten. It is Node
// with the parameter local_reads = true.
var Broken = coup.Node{Name: "raft-local-reads", New: func(p *coup.Params) (coup.Machine, error) {
	m, err := New(p)
	if err != nil {
		return nil, err
	}
	m.(*Machine).cfg.localReads = true
	return m, nil
}, Messages: messages()}

// UnsyncedVote is the same store with a durability bug: it writes its
// term and vote to its Storage but never syncs them, so a power failure
// may take back a vote the node granted, and the node, restarted, votes
// again in the same term: two leaders in one term. It is Node with the
// parameter sync_vote = false.
var UnsyncedVote = coup.Node{Name: "raft-unsynced-vote", New: func(p *coup.Params) (coup.Machine, error) {
	m, err := New(p)
	if err != nil {
		return nil, err
	}
	m.(*Machine).cfg.syncVote = false
	return m, nil
}, Messages: messages()}

// config is a machine's parameters.
type config struct {
	// tick is the period of the leader's ticks; heartbeatTicks and
	// electionTicks are raft's HeartbeatTick and ElectionTick, in ticks.
	tick                          time.Duration
	heartbeatTicks, electionTicks int
	// localReads answers a leader's reads at once (Broken).
	localReads bool
	// syncVote syncs the term and vote once written, before any message
	// that follows from them (off in UnsyncedVote).
	syncVote bool
}

// New builds a machine from the scenario's parameters: tick (default
// 10ms), heartbeat_ticks (2), election_ticks (10), local_reads (false)
// and sync_vote (true).
func New(p *coup.Params) (coup.Machine, error) {
	var c config
	var err error
	if c.tick, err = p.PositiveDuration("tick", 10*time.Millisecond); err != nil {
		return nil, err
	}
	if c.heartbeatTicks, err = p.Int("heartbeat_ticks", 2); err != nil {
		return nil, err
	}
	if c.electionTicks, err = p.Int("election_ticks", 10); err != nil {
		return nil, err
	}
	if c.localReads, err = p.Bool("local_reads", false); err != nil {
		return nil, err
	}
	if c.syncVote, err = p.Bool("sync_vote", true); err != nil {
		return nil, err
	}
	if c.heartbeatTicks < 1 || c.electionTicks <= c.heartbeatTicks {
		return nil, &nodes.ParamError{Key: "election_ticks", Err: fmt.Sprintf("must be more than heartbeat_ticks (%d) and heartbeat_ticks at least 1, got %d", c.heartbeatTicks, c.electionTicks)}
	}
	return &Machine{cfg: c}, p.Unused()
}

// Machine is one node: a raft.RawNode, its storage, and the key-value
// store its committed entries build.
type Machine struct {
	env     coup.Env
	cfg     config
	rn      *raft.RawNode
	storage *raft.MemoryStorage
	names   []string // by raft id − 1
	self    uint64

	kv      store
	applied uint64
	// ticking: the node leads, and its tick timer runs.
	ticking bool
	// lead and term are the belief last reported.
	lead, term uint64
	reported   bool

	// disk keeps the term and vote across restarts; voted is what was
	// last written there.
	disk  coup.Storage
	voted *pb.HardState

	nextID    int64
	proposals map[int64]coup.Request  // writes and cas awaiting their entry
	reads     map[string]coup.Request // reads awaiting their ReadIndex
	readable  []pendingRead           // reads awaiting the apply of their index
}

var _ coup.Machine = (*Machine)(nil)

// pendingRead is a read whose read index is known.
type pendingRead struct {
	index uint64
	req   coup.Request
}

// Start builds the RawNode: every node a voter, from a snapshot at index
// 1 that holds the configuration, so that all start alike.
func (m *Machine) Start(env coup.Env) {
	m.env = env
	m.names = env.Nodes()
	voters := make([]uint64, len(m.names))
	for i, n := range m.names {
		voters[i] = uint64(i + 1)
		if n == env.Self() {
			m.self = uint64(i + 1)
		}
	}
	m.storage = raft.NewMemoryStorage()
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: &pb.ConfState{Voters: voters}, Index: new(uint64(1)), Term: new(uint64(1))}}
	if err := m.storage.ApplySnapshot(snap); err != nil {
		panic(fmt.Sprintf("raftkv: bootstrap: %v", err))
	}
	m.disk = coup.StorageOf(env)
	if hs := m.loadVote(); hs != nil {
		if err := m.storage.SetHardState(hs); err != nil {
			panic(fmt.Sprintf("raftkv: hard state: %v", err))
		}
		m.voted = hs
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              m.self,
		ElectionTick:    m.cfg.electionTicks,
		HeartbeatTick:   m.cfg.heartbeatTicks,
		Storage:         m.storage,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		ReadOnlyOption:  raft.ReadOnlySafe,
		Logger:          logger{env},
	})
	if err != nil {
		panic(fmt.Sprintf("raftkv: %v", err)) // the configuration is ours
	}
	m.rn, m.kv, m.applied = rn, store{}, 1
	m.proposals, m.reads = map[int64]coup.Request{}, map[string]coup.Request{}
	m.resetElection()
	m.ready()
}

// Receive steps a peer's raft message. A message from the leader it
// follows restarts its election timer, as raft's own ticks would.
func (m *Machine) Receive(from string, msg coup.Msg) {
	rm, err := decode(msg.(Msg))
	if err != nil {
		m.env.Logf("from %s: %v", from, err)
		return
	}
	if err := m.rn.Step(rm); err != nil {
		m.env.Logf("from %s: step %s: %v", from, rm.GetType(), err)
	}
	switch rm.GetType() {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if rm.GetFrom() == m.rn.BasicStatus().Lead {
			m.resetElection()
		}
	}
	m.ready()
}

// Timeout ticks a leader, or starts an election.
func (m *Machine) Timeout(name string) {
	switch name {
	case "tick":
		m.rn.Tick()
		m.env.SetTimer("tick", m.cfg.tick)
	case "election":
		if err := m.rn.Campaign(); err != nil {
			m.env.Logf("campaign: %v", err)
		}
		m.resetElection()
	}
	m.ready()
}

// Request serves lin-kv: a write or cas is proposed and answered once
// applied; a read asks for a read index and is answered once that index
// is applied (or, in Broken, by a leader at once).
func (m *Machine) Request(r coup.Request) {
	q, err := parseRequest(r)
	if err != nil {
		m.env.Fail(r, coup.Error{Code: 12, Text: err.Error(), Definite: true})
		return
	}
	st := m.rn.BasicStatus()
	switch {
	case r.Op == "read" && m.cfg.localReads && st.RaftState == raft.StateLeader:
		m.answerRead(r, *q.Key)
		return
	case st.Lead == raft.None:
		m.env.Fail(r, coup.Error{Code: nodes.CodeTemporarilyUnavailable, Text: "no leader known", Definite: true})
		return
	}
	m.nextID++
	if r.Op == "read" {
		ctx := fmt.Sprintf("%s/%d", m.env.Self(), m.nextID)
		m.reads[ctx] = r
		m.rn.ReadIndex([]byte(ctx))
		m.ready()
		return
	}
	o := op{Node: m.env.Self(), ID: m.nextID, F: r.Op, Key: *q.Key}
	if r.Op == "write" {
		o.Value = *q.Value
	} else {
		o.From, o.To = *q.From, *q.To
	}
	data, _ := json.Marshal(o) // an op always marshals
	if err := m.rn.Propose(data); err != nil {
		m.env.Fail(r, coup.Error{Code: nodes.CodeTemporarilyUnavailable, Text: err.Error(), Definite: true})
		return
	}
	m.proposals[o.ID] = r
	m.ready()
}

// ready carries out what raft asks, until it asks nothing more: report
// a changed belief (before any message that follows from it), store
// entries and hard state, send messages, apply committed entries and
// answer their clients, answer reads whose index is applied. Then the
// timers follow the node's role.
func (m *Machine) ready() {
	for m.rn.HasReady() {
		rd := m.rn.Ready()
		m.report()
		if !raft.IsEmptySnap(rd.Snapshot) {
			if err := m.storage.ApplySnapshot(rd.Snapshot); err != nil {
				panic(fmt.Sprintf("raftkv: apply snapshot: %v", err))
			}
		}
		if err := m.storage.Append(rd.Entries); err != nil {
			panic(fmt.Sprintf("raftkv: append: %v", err))
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			if err := m.storage.SetHardState(rd.HardState); err != nil {
				panic(fmt.Sprintf("raftkv: hard state: %v", err))
			}
			m.saveVote(rd.HardState)
		}
		for _, msg := range rd.Messages {
			if msg.GetType() == pb.MsgVoteResp && !msg.GetReject() {
				m.resetElection() // a vote granted waits for the candidate, as raft's ticks would
			}
			m.env.Send(m.names[msg.GetTo()-1], encode(msg))
		}
		for _, rs := range rd.ReadStates {
			if req, ok := m.reads[string(rs.RequestCtx)]; ok {
				delete(m.reads, string(rs.RequestCtx))
				m.readable = append(m.readable, pendingRead{rs.Index, req})
			}
		}
		for _, e := range rd.CommittedEntries {
			m.apply(e)
		}
		m.serveReads()
		m.rn.Advance(rd)
	}
	m.report()
	m.follow()
}

// apply applies a committed entry to the store and answers its client,
// when this node proposed it.
func (m *Machine) apply(e *pb.Entry) {
	m.applied = e.GetIndex()
	if e.GetType() != pb.EntryNormal || len(e.GetData()) == 0 {
		return // a new leader's empty entry
	}
	var o op
	if err := json.Unmarshal(e.GetData(), &o); err != nil {
		panic(fmt.Sprintf("raftkv: entry %d: %v", e.GetIndex(), err)) // only ops are proposed
	}
	fail := m.kv.apply(o)
	if o.Node != m.env.Self() {
		return
	}
	req, ok := m.proposals[o.ID]
	if !ok {
		return
	}
	delete(m.proposals, o.ID)
	if fail != nil {
		m.env.Fail(req, *fail)
		return
	}
	m.env.ReplyWith(req, struct{}{})
}

// serveReads answers the reads whose read index is applied.
func (m *Machine) serveReads() {
	kept := m.readable[:0]
	for _, r := range m.readable {
		if r.index <= m.applied {
			var q request
			_ = json.Unmarshal(r.req.Body, &q) // parsed when it came
			m.answerRead(r.req, *q.Key)
			continue
		}
		kept = append(kept, r)
	}
	m.readable = kept
}

// answerRead answers a read from this node's copy of the store.
func (m *Machine) answerRead(r coup.Request, key int) {
	v, ok := m.kv[key]
	if !ok {
		m.env.Fail(r, coup.Error{Code: codeKeyDoesNotExist, Text: "no such key", Definite: true})
		return
	}
	m.env.ReplyWith(r, readValue{Value: v})
}

// report tells coup whom the node follows and in which term, from raft's
// soft state, when that changed: the leader, or "" for none.
func (m *Machine) report() {
	st := m.rn.BasicStatus()
	lead, term := st.Lead, st.HardState.GetTerm()
	if m.reported && lead == m.lead && (lead == raft.None || term == m.term) {
		return
	}
	m.reported, m.lead, m.term = true, lead, term
	if lead == raft.None {
		m.env.Report(coup.Report{What: "leader", Value: ""})
		return
	}
	t := int64(term)
	m.env.Report(coup.Report{What: "leader", Value: m.names[lead-1], Term: &t})
}

// follow keeps the timers of the node's role: a leader ticks, for its
// heartbeats; any other node waits for its election timeout.
func (m *Machine) follow() {
	leads := m.rn.BasicStatus().RaftState == raft.StateLeader
	switch {
	case leads && !m.ticking:
		m.ticking = true
		m.env.CancelTimer("election")
		m.env.SetTimer("tick", m.cfg.tick)
	case !leads && m.ticking:
		m.ticking = false
		m.env.CancelTimer("tick")
		m.resetElection()
	}
}

// resetElection restarts the election timer with a timeout drawn, as
// raft draws its own, from [election_ticks, 2·election_ticks) ticks, but
// from the node's seeded source.
func (m *Machine) resetElection() {
	e := m.cfg.electionTicks
	m.env.SetTimer("election", time.Duration(e+m.env.Rand().IntN(e))*m.cfg.tick)
}

// voteFile is the Storage file of the term and vote.
const voteFile = "vote"

// vote is the term and vote as the disk keeps them.
type vote struct {
	Term uint64 `json:"term"`
	Vote uint64 `json:"vote"`
}

// saveVote writes the term and vote when they changed, and syncs them
// (unless UnsyncedVote), before the Ready's messages go: a vote granted
// is durable before the candidate hears of it, as raft requires.
func (m *Machine) saveVote(hs *pb.HardState) {
	if hs.GetTerm() == m.voted.GetTerm() && hs.GetVote() == m.voted.GetVote() {
		return
	}
	data, _ := json.Marshal(vote{Term: hs.GetTerm(), Vote: hs.GetVote()})
	if err := m.disk.Write(voteFile, data); err != nil {
		panic(fmt.Sprintf("raftkv: write the vote: %v", err)) // raft cannot go on without it
	}
	if m.cfg.syncVote {
		if err := m.disk.Sync(voteFile); err != nil {
			panic(fmt.Sprintf("raftkv: sync the vote: %v", err))
		}
	}
	m.voted = &pb.HardState{Term: new(hs.GetTerm()), Vote: new(hs.GetVote())}
}

// loadVote reads the term and vote a restarted node kept, as a hard
// state whose commit is the bootstrap snapshot's index (the log itself is
// in memory, and starts again from the snapshot); nil for none.
func (m *Machine) loadVote() *pb.HardState {
	data, err := m.disk.Read(voteFile)
	if err != nil {
		return nil
	}
	var v vote
	if err := json.Unmarshal(data, &v); err != nil || v.Term == 0 {
		m.env.Logf("the vote file is unreadable (%v): starting without it", err)
		return nil
	}
	return &pb.HardState{Term: new(v.Term), Vote: new(v.Vote), Commit: new(uint64(1))}
}
