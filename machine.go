package coup

import "github.com/coupharness/coup/nodes"

// Machine is one node's state machine: started once, then one input at a
// time (a peer's message, a timer it set, a client's request), acting on
// the world only through its Env. It never reads a clock, starts a
// goroutine, uses a global random source or does I/O, so that the
// simulator can run it on a virtual clock and a seed replays it. It is
// nodes.Machine, the contract coup's own algorithms keep.
type Machine = nodes.Machine

// Env is everything a Machine may do: send messages, set and cancel
// timers, report its beliefs, answer client requests, draw from its seeded
// random source and log. It is nodes.Env.
type Env = nodes.Env

// Msg is the body of a message between nodes: a struct whose Type names
// it, written on the wire as a JSON object with its exported fields. It is
// nodes.Msg.
type Msg = nodes.Msg

// Report is a change of a node's belief, told to coup through Env.Report:
// What "leader" with Value the node trusted ("" for none) and, for an
// algorithm with terms, Term; the checks judge these. It is nodes.Report.
type Report = nodes.Report

// Request is a client's operation addressed to a node (lin-kv's read,
// write and cas; an election's elect; a lock's acquire and release),
// answered with Env.Reply, Env.ReplyWith or Env.Fail. It is nodes.Request.
type Request = nodes.Request

// Error is a failed client operation, with Maelstrom's error code (such
// as nodes.CodeTemporarilyUnavailable) and whether it surely did not take
// effect (Definite). It is nodes.Error.
type Error = nodes.Error

// Params are a machine's parameters: the scenario's [params] table, read
// with accessors that name a bad key. It is nodes.Params.
type Params = nodes.Params
