package history

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends e as one line of a history file, newline included:
// the JSON that encoding/json would write for it (the same keys in the
// same order, empty fields left out), written without reflection, since a
// run that records its messages writes millions of these. A string with
// anything to escape is escaped by encoding/json itself.
func AppendJSON(b []byte, e *Event) ([]byte, error) {
	b = append(b, `{"i":`...)
	b = strconv.AppendInt(b, e.Index, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind))
	b = appendField(b, `,"node":`, e.Node)
	b = appendField(b, `,"what":`, e.What)
	b = appendField(b, `,"value":`, e.Value)
	b = appendField(b, `,"name":`, e.Name)
	if e.Term != nil {
		b = append(b, `,"term":`...)
		b = strconv.AppendInt(b, *e.Term, 10)
	}
	if e.Incarnation != 0 {
		b = append(b, `,"incarnation":`...)
		b = strconv.AppendInt(b, int64(e.Incarnation), 10)
	}
	b = appendField(b, `,"detail":`, e.Detail)
	b = appendList(b, `,"tail":[`, e.Tail)
	b = appendField(b, `,"process":`, e.Process)
	b = appendField(b, `,"type":`, e.Type)
	b = appendField(b, `,"f":`, e.F)
	if e.Token != nil {
		b = append(b, `,"token":`...)
		b = strconv.AppendInt(b, *e.Token, 10)
	}
	b = appendField(b, `,"host":`, e.Host)
	b = appendField(b, `,"served":`, e.Served)
	b = appendField(b, `,"phase":`, e.Phase)
	b = appendList(b, `,"nodes":[`, e.Nodes)
	if e.Msg != 0 {
		b = append(b, `,"msg":`...)
		b = strconv.AppendInt(b, e.Msg, 10)
	}
	b = appendField(b, `,"src":`, e.Src)
	b = appendField(b, `,"dest":`, e.Dest)
	b = appendField(b, `,"mtype":`, e.MType)
	b = appendField(b, `,"reason":`, e.Reason)
	b = appendField(b, `,"body":`, e.Body)
	if e.Meta != nil {
		m, err := json.Marshal(e.Meta)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"meta":`...), m...)
	}
	if len(e.Evidence) > 0 {
		v, err := json.Marshal(e.Evidence)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"evidence":`...), v...)
	}
	if len(e.Counts) > 0 {
		c, err := json.Marshal(e.Counts)
		if err != nil {
			return b, err
		}
		b = append(append(b, `,"counts":`...), c...)
	}
	return append(b, '}', '\n'), nil
}

// appendList appends a list of strings after its key (which ends with
// its opening bracket), or nothing when it is empty.
func appendList(b []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(b, key...)
	for i, n := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, n)
	}
	return append(b, ']')
}

func appendField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendString(append(b, key...), v)
}

// appendString appends s as a JSON string: as it is when nothing in it
// needs escaping, else as encoding/json escapes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
