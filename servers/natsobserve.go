package servers

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/coupharness/coup/scenario"
)

// The nats reader (read = "nats", scenario.PollReadNats): what a NATS
// server believes of the leader of the stream scenario.NatsStream, from
// its monitoring port, in one question of two requests:
//
//  1. /jsz?streams=true&raft=true: the stream's details on this server
//     (account_details[].stream_detail[]), whose cluster names the leader
//     as this server believes it (its server_name), and its Raft group
//     (stream_raft_group; 2.9.10 gives none); and meta_cluster.leader,
//     JetStream's meta leader;
//  2. /raftz?acc=ACCOUNT&group=GROUP, on a server that has it (2.10 and
//     later; 2.9.10 answers 404, and is not asked again): the group's
//     state, leader (a peer id, named through its peers) and term, read
//     together under the group's lock, so that the term is the leader's.
//
// A server that knows no such stream (not yet created, or JetStream not
// ready) follows nobody. A leader named by its server name is read as a
// follower of that name, which the observer maps to a node: a server
// that names itself leads (its server_name is its node's id, in the
// preset). The meta leader is not a role the history records: a change
// of it is written to harness.log.

// natsJsz is the part of a /jsz answer the reader reads.
type natsJsz struct {
	Meta *struct {
		Leader string `json:"leader"`
	} `json:"meta_cluster"`
	Accounts []struct {
		Name    string `json:"name"`
		ID      string `json:"id"`
		Streams []struct {
			Name      string `json:"name"`
			RaftGroup string `json:"stream_raft_group"`
			Cluster   *struct {
				Leader    string `json:"leader"`
				RaftGroup string `json:"raft_group"`
			} `json:"cluster"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// natsStreamView is what one /jsz answer says of the stream.
type natsStreamView struct {
	found   bool   // the server has the stream
	leader  string // its leader's server name, "" for none
	group   string // its Raft group ("" when the server does not say)
	account string // the account it is in
	meta    string // JetStream's meta leader, "" for none
}

// parseJsz reads a /jsz answer for the stream named stream.
func parseJsz(answer []byte, stream string) (natsStreamView, error) {
	var j natsJsz
	if err := json.Unmarshal(answer, &j); err != nil {
		return natsStreamView{}, fmt.Errorf("/jsz: not the JSON of JetStream's monitoring: %w", err)
	}
	var v natsStreamView
	if j.Meta != nil {
		v.meta = j.Meta.Leader
	}
	for _, a := range j.Accounts {
		for _, st := range a.Streams {
			if st.Name != stream {
				continue
			}
			v.found, v.account = true, a.ID
			if v.account == "" {
				v.account = a.Name
			}
			// The group is the stream's (raft=true), and its cluster's on
			// a follower of 2.15 (not on its leader).
			v.group = st.RaftGroup
			if st.Cluster != nil {
				v.leader = st.Cluster.Leader
				if v.group == "" {
					v.group = st.Cluster.RaftGroup
				}
			}
			return v, nil
		}
	}
	return v, nil
}

// natsRaftGroup is the part of a /raftz group the reader reads.
type natsRaftGroup struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Leader string `json:"leader"`
	Term   *int64 `json:"term"`
	Peers  map[string]struct {
		Name string `json:"name"`
	} `json:"peers"`
}

// parseRaftz reads a /raftz answer (account → group → state) for the
// group: its term, and the leader it follows by server name (self when
// it leads; "" for none). ok is false when the answer has no such group.
func parseRaftz(answer []byte, account, group string) (leader string, leads bool, term int64, ok bool, err error) {
	var all map[string]map[string]natsRaftGroup
	if err := json.Unmarshal(answer, &all); err != nil {
		return "", false, 0, false, fmt.Errorf("/raftz: not the JSON of NATS's Raft groups: %w", err)
	}
	g, found := all[account][group]
	if !found || g.Term == nil {
		return "", false, 0, false, nil
	}
	switch {
	case strings.EqualFold(g.State, "leader"):
		return "", true, *g.Term, true, nil
	case g.Leader == "":
		return "", false, *g.Term, true, nil
	}
	p, known := g.Peers[g.Leader]
	if !known || p.Name == "" {
		return "", false, 0, false, nil // a leader it cannot name: /jsz's name stands
	}
	return p.Name, false, *g.Term, true, nil
}

// natsReading is the reading of a server's views: the stream's leader
// from /jsz, and from /raftz when it answered (haveRaft) its state,
// leader and term, which then stand for /jsz's.
func natsReading(v natsStreamView, haveRaft bool, raftLeader string, raftLeads bool, term int64) *reading {
	rd := &reading{}
	if !v.found {
		rd.role = scenario.RoleNone
		return rd
	}
	leader := v.leader
	if haveRaft {
		t := term
		rd.term = &t
		if raftLeads {
			rd.role = scenario.RoleLeader
			return rd
		}
		leader = raftLeader
	}
	if leader == "" {
		rd.role = scenario.RoleNone
		return rd
	}
	rd.role, rd.leader = scenario.RoleFollower, leader
	return rd
}

// natsReader is the reader of one server's polling loop: what it learnt
// across rounds (that the server has no /raftz, the meta leader it last
// named).
type natsReader struct {
	logf func(format string, args ...any) // harness.log
	node string
	// noRaftz is set when /raftz answered 404 before it ever answered
	// (2.9.10 has none); a server that answered it once may answer 404
	// for a group it does not know yet, and is asked again.
	noRaftz, raftzAnswered bool
	meta                   string
}

func init() {
	pollReaders[scenario.PollReadNats] = func(r *run, node string) pollReader {
		nr := &natsReader{logf: r.logf, node: node}
		return nr.read
	}
}

// read asks a server's /jsz (the poll's URL) and, where it has one, its
// /raftz, and fills rd.
func (nr *natsReader) read(jszURL string, ask func(url string) ([]byte, error), rd *reading) error {
	answer, err := ask(jszURL)
	if err != nil {
		return err
	}
	v, err := parseJsz(answer, scenario.NatsStream)
	if err != nil {
		return err
	}
	u, err := url.Parse(jszURL)
	if err != nil {
		return err
	}
	if v.meta != nr.meta {
		if v.meta != "" {
			nr.logf("%s: JetStream's meta leader is %s", nr.node, v.meta)
		} else {
			nr.logf("%s: JetStream has no meta leader", nr.node)
		}
		nr.meta = v.meta
	}
	var (
		leader string
		leads  bool
		term   int64
		have   bool
	)
	if v.found && v.group != "" && !nr.noRaftz {
		q := url.Values{"acc": {v.account}, "group": {v.group}}
		answer, err := ask(u.Scheme + "://" + u.Host + "/raftz?" + q.Encode())
		switch {
		case err != nil && strings.Contains(err.Error(), "404"):
			nr.noRaftz = !nr.raftzAnswered
		case err != nil:
			return err
		default:
			nr.raftzAnswered = true
			if leader, leads, term, have, err = parseRaftz(answer, v.account, v.group); err != nil {
				return err
			}
		}
	}
	got := natsReading(v, have, leader, leads, term)
	if got.role == scenario.RoleLeader {
		// A leader names itself: else the observer would take the
		// leader it last followed for the one it names, and its claim
		// for one under another's term (observer.ownTerm).
		got.leader = nr.node
	}
	rd.role, rd.leader, rd.term = got.role, got.leader, got.term
	return nil
}
