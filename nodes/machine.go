package nodes

import (
	"math/rand/v2"
	"time"
)

// Machine is an algorithm's state machine, for one node.
type Machine interface {
	// Start is called once, after the node has learnt its id and its peers.
	Start(env Env)
	// Receive handles a message from a peer. Messages that failed their
	// checksum never get here.
	Receive(from string, m Msg)
	// Timeout handles the expiry of the timer set under name.
	Timeout(name string)
	// Request handles a client operation. The machine answers it, now or
	// later, with Env.Reply or Env.Fail; it may also never answer.
	Request(r Request)
}

// Env is everything a machine may do to the world.
type Env interface {
	// Self is this node's id, such as "n3".
	Self() string
	// Nodes are all node ids, this one included, in ring order.
	Nodes() []string
	// ElectionID is the election identifier of a node (by default its
	// number: 3 for "n3"; a scenario can give any arrangement).
	ElectionID(node string) int
	// Send sends a message to a peer.
	Send(to string, m Msg)
	// SetTimer arranges for Timeout(name) after d of this node's clock.
	// Setting a timer that is already set restarts it.
	SetTimer(name string, d time.Duration)
	// CancelTimer cancels the timer set under name, if any.
	CancelTimer(name string)
	// Report tells the harness that a belief changed.
	Report(r Report)
	// Reply answers a client request successfully, with a value.
	Reply(r Request, value string)
	// ReplyWith answers a client request successfully with the given
	// body fields beside type and in_reply_to: a value that marshals to
	// a JSON object, such as a struct (lin-kv's read_ok carries {"value":
	// 4}, a number; echo_ok {"echo": ...}).
	ReplyWith(r Request, fields any)
	// Fail answers a client request with an error. A definite error
	// (Definite true) means the operation did not take effect.
	Fail(r Request, e Error)
	// Rand is this node's random source, seeded by the scenario.
	Rand() *rand.Rand
	// Logf writes a line to the node's log.
	Logf(format string, args ...any)
}

// Report is a change in what a node believes. What is one of the report
// kinds of the history ("leader", "participant", "cs", "metric", ...).
type Report struct {
	What  string `json:"what"`
	Value string `json:"value"`
	// Name names a metric.
	Name string `json:"name,omitempty"`
	// Term is the term of a leader report, for an algorithm that has
	// terms (or epochs, or lease generations); nil for none. It must not
	// be negative.
	Term *int64 `json:"term,omitempty"`
}

// Leader reports the node now trusted as leader ("" for none).
func Leader(node string) Report { return Report{What: "leader", Value: node} }

// Participant reports whether the node now takes part in an election.
func Participant(p bool) Report {
	if p {
		return Report{What: "participant", Value: "true"}
	}
	return Report{What: "participant", Value: "false"}
}

// Metric reports the current value of a named figure, such as a timeout.
func Metric(name, value string) Report { return Report{What: "metric", Name: name, Value: value} }

// Request is a client operation addressed to a node.
type Request struct {
	// Client is the id of the client ("c1").
	Client string
	// ID is the request's msg_id; the answer carries it as in_reply_to.
	ID int
	// Op is the operation, such as "elect", "acquire" or "release".
	Op string
	// Value is the operation's argument, if any: the request's "value"
	// field when it is a string.
	Value string
	// Body is the request's whole body, as the client sent it, for an
	// operation whose fields are more than a value (lin-kv's key, from
	// and to). A machine must not change it.
	Body []byte
}

// Error is a failed client operation, with Maelstrom's error codes.
type Error struct {
	Code     int
	Text     string
	Definite bool
}

// Maelstrom error codes used by coup's nodes.
const (
	CodeTimeout                = 0
	CodeNotSupported           = 10
	CodeTemporarilyUnavailable = 11
	CodeCrash                  = 13
	CodeAbort                  = 14
	CodePreconditionFailed     = 22
)
