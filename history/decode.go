package history

import (
	"bytes"
	"encoding/json"

	"github.com/coupharness/coup/internal/jsonscan"
)

// decoder reads history lines into events without reflection, interning
// the short strings that repeat from line to line (kinds, node names,
// message types), so that a history of millions of events costs little
// more than its events. It takes the lines a recorder writes; for
// anything else (an escaped string, a repeated key, a key in another
// case, a number that is not a plain integer) it leaves the line to
// encoding/json, so that the event, or the error, is always the one
// json.Unmarshal gives.
type decoder struct {
	strs map[string]string
	// recent caches interned strings by a cheap hash of their bytes, in
	// front of strs.
	recent [256]string
}

// maxInternLen and maxInternCount bound what the decoder interns.
const (
	maxInternLen   = 64
	maxInternCount = 1 << 16
)

// event decodes one line into e (which must be zero).
func (d *decoder) event(b []byte, e *Event) error {
	if d.fast(b, e) {
		return nil
	}
	*e = Event{}
	return json.Unmarshal(b, e)
}

// keyBit numbers the keys of an event, as bits, to tell a repeated key; 0
// for a key an event does not have.
func keyBit(k string) uint32 {
	switch k {
	case "i":
		return 1 << 0
	case "t":
		return 1 << 1
	case "kind":
		return 1 << 2
	case "node":
		return 1 << 3
	case "what":
		return 1 << 4
	case "value":
		return 1 << 5
	case "name":
		return 1 << 6
	case "term":
		return 1 << 7
	case "incarnation":
		return 1 << 8
	case "detail":
		return 1 << 9
	case "process":
		return 1 << 10
	case "type":
		return 1 << 11
	case "f":
		return 1 << 12
	case "phase":
		return 1 << 13
	case "nodes":
		return 1 << 14
	case "msg":
		return 1 << 15
	case "src":
		return 1 << 16
	case "dest":
		return 1 << 17
	case "mtype":
		return 1 << 18
	case "reason":
		return 1 << 19
	case "body":
		return 1 << 20
	case "meta":
		return 1 << 21
	case "counts":
		return 1 << 22
	case "token":
		return 1 << 23
	case "host":
		return 1 << 24
	case "served":
		return 1 << 25
	case "tail":
		return 1 << 26
	case "evidence":
		return 1 << 27
	}
	return 0
}

// eventKeys are the keys keyBit knows.
var eventKeys = []string{"i", "t", "kind", "node", "what", "value", "name", "term", "incarnation", "detail",
	"process", "type", "f", "phase", "nodes", "msg", "src", "dest", "mtype", "reason", "body", "meta", "counts", "token",
	"host", "served", "tail", "evidence"}

func (d *decoder) fast(b []byte, e *Event) bool {
	s := jsonscan.Scanner{B: b}
	s.WS()
	if !s.Eat('{') {
		return false
	}
	var seen uint32
	s.WS()
	if s.Eat('}') {
		s.WS()
		return s.I == len(b)
	}
	for {
		s.WS()
		key, plain := s.Str()
		if !plain {
			return false
		}
		s.WS()
		if !s.Eat(':') {
			return false
		}
		s.WS()
		bit := keyBit(string(key))
		if bit == 0 {
			if foldsToKey(key) || !s.Value() {
				return false
			}
		} else {
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			if !d.field(&s, string(key), e) {
				return false
			}
		}
		s.WS()
		if s.Eat('}') {
			break
		}
		if !s.Eat(',') {
			return false
		}
	}
	s.WS()
	return s.I == len(b)
}

func foldsToKey(key []byte) bool {
	for _, k := range eventKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// field decodes the value of one known key.
func (d *decoder) field(s *jsonscan.Scanner, key string, e *Event) bool {
	if s.Lit("null") {
		return true // json.Unmarshal leaves the field as it is
	}
	switch key {
	case "i", "t", "msg", "incarnation", "term", "token":
		n, ok := s.Int()
		if !ok {
			return false
		}
		switch key {
		case "i":
			e.Index = n
		case "t":
			e.Time = n
		case "msg":
			e.Msg = n
		case "incarnation":
			e.Incarnation = int(n)
		case "term":
			term := n
			e.Term = &term
		case "token":
			token := n
			e.Token = &token
		}
		return true
	case "nodes", "tail":
		if !s.Eat('[') {
			return false
		}
		list := &e.Nodes
		if key == "tail" {
			list = &e.Tail
		}
		*list = []string{}
		s.WS()
		if s.Eat(']') {
			return true
		}
		for {
			s.WS()
			v, ok := d.str(s)
			if !ok {
				return false
			}
			*list = append(*list, v)
			s.WS()
			if s.Eat(']') {
				return true
			}
			if !s.Eat(',') {
				return false
			}
		}
	case "meta", "counts", "evidence":
		start := s.I
		if !s.Value() {
			return false
		}
		raw := s.B[start:s.I]
		if key == "evidence" {
			var ev []Evidence
			if json.Unmarshal(raw, &ev) != nil {
				return false
			}
			e.Evidence = ev
			return true
		}
		if key == "meta" {
			var m Meta
			if json.Unmarshal(raw, &m) != nil {
				return false
			}
			e.Meta = &m
			return true
		}
		var c map[string]int64
		if json.Unmarshal(raw, &c) != nil {
			return false
		}
		e.Counts = c
		return true
	}
	v, ok := d.str(s)
	if !ok {
		return false
	}
	switch key {
	case "kind":
		e.Kind = Kind(v)
	case "node":
		e.Node = v
	case "what":
		e.What = v
	case "value":
		e.Value = v
	case "name":
		e.Name = v
	case "detail":
		e.Detail = v
	case "process":
		e.Process = v
	case "type":
		e.Type = v
	case "f":
		e.F = v
	case "phase":
		e.Phase = v
	case "src":
		e.Src = v
	case "dest":
		e.Dest = v
	case "mtype":
		e.MType = v
	case "reason":
		e.Reason = v
	case "body":
		e.Body = v
	case "host":
		e.Host = v
	case "served":
		e.Served = v
	}
	return true
}

// str reads a plain string, interned when it is short.
func (d *decoder) str(s *jsonscan.Scanner) (string, bool) {
	v, ok := s.Str()
	if !ok {
		return "", false
	}
	if len(v) > maxInternLen {
		return string(v), true
	}
	if len(v) == 0 {
		return "", true
	}
	slot := &d.recent[(len(v)*31+int(v[0])*7+int(v[len(v)-1])*3)&255]
	if *slot == string(v) {
		return *slot, true
	}
	if x, ok := d.strs[string(v)]; ok {
		*slot = x
		return x, true
	}
	x := string(v)
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	if len(d.strs) < maxInternCount {
		d.strs[x] = x
	}
	return x, true
}
