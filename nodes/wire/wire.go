// Package wire is the node protocol's line format: Maelstrom's envelope
// ({"src","dest","body"}) with coup's additions, one JSON object per line.
//
// coup adds two optional envelope fields:
//
//   - "sum": the CRC-32C (Castagnoli) of the exact body bytes, as 8 hex
//     digits. A receiver that checks sums drops a message whose body does
//     not match and reports it to the harness; it never acts on it.
//   - "id": the harness's id of the message, added by the router when it
//     delivers. A node names it when it reports a rejected message.
//
// Reports to the harness are messages to the reserved destination "coup"
// with a body of type "report". Clients have ids that start with "c".
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Harness is the reserved destination of reports and the source of control
// messages from the harness.
const Harness = "coup"

// Envelope is one message line.
type Envelope struct {
	ID   int64           `json:"id,omitempty"`
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
	Sum  string          `json:"sum,omitempty"`
}

// Head holds the body fields that every layer may look at.
type Head struct {
	Type      string `json:"type"`
	MsgID     int    `json:"msg_id,omitempty"`
	InReplyTo int    `json:"in_reply_to,omitempty"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sum is the checksum of body bytes, as carried in the envelope.
func Sum(body []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(body, castagnoli))
}

// Verify reports whether the envelope's sum matches its body. An envelope
// without a sum does not verify.
func (e *Envelope) Verify() bool { return e.Sum != "" && e.Sum == Sum(e.Body) }

// Append appends the envelope as one line (with its newline) to dst. The
// body bytes are written exactly as they are, valid JSON or not, so that a
// checksum over them survives the trip.
func (e *Envelope) Append(dst []byte) []byte {
	dst = append(dst, '{')
	if e.ID != 0 {
		dst = append(dst, `"id":`...)
		dst = strconv.AppendInt(dst, e.ID, 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"src":`...)
	dst = appendString(dst, e.Src)
	dst = append(dst, `,"dest":`...)
	dst = appendString(dst, e.Dest)
	dst = append(dst, `,"body":`...)
	if len(e.Body) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, e.Body...)
	}
	if e.Sum != "" {
		dst = append(dst, `,"sum":`...)
		dst = appendString(dst, e.Sum)
	}
	return append(dst, '}', '\n')
}

// appendString appends s as a JSON string: as it is when nothing in it
// needs escaping, else as encoding/json escapes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			b, _ := json.Marshal(s) // a string always marshals
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Parse parses one line. The body is kept as the exact bytes of the line.
func Parse(line []byte) (Envelope, error) {
	var e Envelope
	if err := json.Unmarshal(line, &e); err != nil {
		return e, fmt.Errorf("unmarshal envelope: %w", err)
	}
	if e.Dest == "" {
		return e, fmt.Errorf("envelope has no dest")
	}
	if len(e.Body) == 0 || string(e.Body) == "null" {
		return e, fmt.Errorf("envelope has no body")
	}
	return e, nil
}

// LeadingID recovers the harness id from a line that does not parse: the
// router writes it first ({"id":123,...}), so it survives a corrupted body.
// It returns 0 when there is none.
func LeadingID(line []byte) int64 {
	const prefix = `{"id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0
	}
	rest := line[len(prefix):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// ParseHead reads the common fields of a body.
func ParseHead(body []byte) (Head, error) {
	var h Head
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("unmarshal body: %w", err)
	}
	return h, nil
}

// ReportBody is the body of a report from a node to the harness.
type ReportBody struct {
	Type  string `json:"type"` // always "report"
	What  string `json:"what"`
	Value string `json:"value"`
	Name  string `json:"name,omitempty"`
	// Msg is the harness id of a rejected message, when known.
	Msg int64 `json:"msg,omitempty"`
	// Term is the term of a leader report (a Raft term, an epoch, a lease
	// generation), when the node's algorithm has one. It must be a
	// non-negative integer; nil when the node gives none.
	Term *int64 `json:"term,omitempty"`
}

// CheckTerm returns an error unless the report's term, if any, is a
// non-negative integer. (A term that is not an integer at all fails to
// unmarshal.)
func (r *ReportBody) CheckTerm() error {
	if r.Term != nil && *r.Term < 0 {
		return fmt.Errorf("term %d is negative: a term must be a non-negative integer", *r.Term)
	}
	return nil
}

// ReplyBody is the body of a node's answer to a client request, or of an
// error (Type "error", with Code and Text).
type ReplyBody struct {
	Type      string `json:"type"`
	InReplyTo int    `json:"in_reply_to"`
	Value     string `json:"value,omitempty"`
	Code      *int   `json:"code,omitempty"`
	Text      string `json:"text,omitempty"`
	// Definite marks an error after which the operation surely did not
	// take effect (Maelstrom's definite error codes imply it too).
	Definite bool `json:"definite,omitempty"`
}

// Reply returns the body of a successful answer to a client: type and
// in_reply_to, then the members of fields, a value that marshals to a
// JSON object (nil for none).
func Reply(typ string, inReplyTo int, fields any) ([]byte, error) {
	b := append([]byte(`{"type":`), appendString(nil, typ)...)
	b = append(b, `,"in_reply_to":`...)
	b = strconv.AppendInt(b, int64(inReplyTo), 10)
	if fields != nil {
		m, err := json.Marshal(fields)
		if err != nil {
			return nil, fmt.Errorf("answer fields: %w", err)
		}
		inner, err := members(m, "type", "in_reply_to")
		if err != nil {
			return nil, fmt.Errorf("answer fields: %w", err)
		}
		if len(inner) > 0 {
			b = append(append(b, ','), inner...)
		}
	}
	return append(b, '}'), nil
}

// members returns the members of a JSON object without its braces, and
// fails when obj is not an object or holds one of the reserved keys.
func members(obj []byte, reserved ...string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%q is not a JSON object", obj)
	}
	for _, k := range reserved {
		if _, ok := m[k]; ok {
			return nil, fmt.Errorf("%q sets %q, which is the protocol's", obj, k)
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	obj = bytes.TrimSpace(obj)
	return bytes.TrimSpace(obj[1 : len(obj)-1]), nil
}

// ReplyHead is what the harness reads of every answer to a client: its
// type, the request it answers, and an error's code, text and
// definiteness. The other fields of the body (lin-kv's value, echo's
// echo) are the workload's to read.
type ReplyHead struct {
	Type      string `json:"type"`
	InReplyTo int    `json:"in_reply_to"`
	Code      *int   `json:"code,omitempty"`
	Text      string `json:"text,omitempty"`
	Definite  bool   `json:"definite,omitempty"`
}

// RequestBody is the body of a client request to a node, in the form of
// the election and lock workloads (an operation with an optional value).
type RequestBody struct {
	Type  string `json:"type"`
	MsgID int    `json:"msg_id"`
	Value string `json:"value,omitempty"`
}

// Request returns the body of a client request: type and msg_id, then
// the members of fields, a JSON object (nil for none), as they are
// written. It fails when fields is not a JSON object or sets type or
// msg_id.
func Request(typ string, msgID int, fields []byte) ([]byte, error) {
	b := append([]byte(`{"type":`), appendString(nil, typ)...)
	b = append(b, `,"msg_id":`...)
	b = strconv.AppendInt(b, int64(msgID), 10)
	if fields != nil {
		inner, err := members(fields, "type", "msg_id")
		if err != nil {
			return nil, fmt.Errorf("request fields: %w", err)
		}
		if len(inner) > 0 {
			b = append(append(b, ','), inner...)
		}
	}
	return append(b, '}'), nil
}

// InitBody is the body of the init message: Maelstrom's fields, then
// coup's, all optional for a foreign node.
type InitBody struct {
	Type    string   `json:"type"` // "init"
	MsgID   int      `json:"msg_id"`
	NodeID  string   `json:"node_id"`
	NodeIDs []string `json:"node_ids"`

	// IDs are the election ids of NodeIDs, in the same order.
	IDs []int `json:"ids,omitempty"`
	// Algorithm names the built-in algorithm to run.
	Algorithm string `json:"algorithm,omitempty"`
	// Params are the algorithm's parameters.
	Params map[string]any `json:"params,omitempty"`
	// Seed seeds the node's random source.
	Seed int64 `json:"seed,omitempty"`
	// ClockRate makes the node's timers run that many times fast (0 is 1).
	ClockRate float64 `json:"clock_rate,omitempty"`
	// Checksums, when true, asks the node to add a sum to every message it
	// sends and to drop any message whose sum is missing or wrong.
	Checksums bool `json:"checksums,omitempty"`
	// DeferStart, when true, asks a node to start its algorithm (and its
	// timers) only on the harness's start message, sent once every node
	// has answered init, so that all nodes start together however long
	// each took to start: always for a built-in node, for a foreign node
	// when its scenario says defer_start. A message from a peer or a
	// client that comes first starts a built-in node too.
	DeferStart bool `json:"defer_start,omitempty"`
}

// StartBody is the control message from the harness that starts a node's
// algorithm (see InitBody.DeferStart).
type StartBody struct {
	Type string `json:"type"` // "start"
}

// ClockRateBody is a control message from the harness that changes the
// rate of a built-in node's timers.
type ClockRateBody struct {
	Type string  `json:"type"` // "clock_rate"
	Rate float64 `json:"rate"`
}
