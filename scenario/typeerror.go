package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// A value of the wrong type fails BurntSushi's decoding with a sentence of
// Go's types ("TOML value has type string; destination has type integer"),
// the last key without its array index ("faults.kind") and no column. So
// when a file that parses as TOML fails to decode, coup finds the value
// itself: it decodes the file into plain maps, walks them beside the schema
// in the order they are written, and decodes each value alone into its
// field's type, as the whole file was; the first that fails is the one to
// name, with its written path ("faults[1].kind"), its line and the column
// of the value, the type the key wants and the value the file gives.

// typeError returns the error of the first value of src, in file order,
// that its key's type cannot hold, or nil when none is found.
func (s *Scenario) typeError(src string) *Error {
	var plain map[string]any
	if _, err := toml.Decode(src, &plain); err != nil {
		return nil // not a type error: the file does not parse
	}
	return s.checkTable("", "", plain)
}

// checkTable checks the keys of one table: schema is its path in the
// schema ("faults"), written its path as the file writes it ("faults[1]").
func (s *Scenario) checkTable(schemaPath, written string, table map[string]any) *Error {
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	// The written path quotes a name as the locator does ("zoo.cfg").
	wjoin := func(k string) string { return join(written, toml.Key{k}.String()) }
	names := make([]string, 0, len(table))
	for k := range table {
		names = append(names, k)
	}
	// In the order they are written; keys not found last, by name.
	sort.Slice(names, func(i, j int) bool {
		a, aok := s.loc.keys[wjoin(names[i])]
		b, bok := s.loc.keys[wjoin(names[j])]
		switch {
		case aok != bok:
			return aok
		case aok && a != b:
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		if e := s.checkKey(join(schemaPath, name), wjoin(name), table[name]); e != nil {
			return e
		}
	}
	return nil
}

// checkKey checks one key's value against the schema.
func (s *Scenario) checkKey(schemaPath, written string, v any) *Error {
	k, ok := schema()[schemaPath]
	if !ok {
		return nil // an unknown key: said once the file decodes
	}
	switch k.kind {
	case tableKey:
		t, ok := v.(map[string]any)
		if !ok {
			return s.typeErrorAt(written, "must be a table (["+written+"] or "+written+" = { … })", v)
		}
		return s.checkTable(schemaPath, written, t)
	case arrayKey:
		var entries []map[string]any
		switch a := v.(type) {
		case []map[string]any:
			entries = a
		case []any:
			for _, e := range a {
				t, ok := e.(map[string]any)
				if !ok {
					return s.typeErrorAt(written, "must be an array of tables ([["+written+"]])", v)
				}
				entries = append(entries, t)
			}
		default:
			return s.typeErrorAt(written, "must be an array of tables ([["+written+"]])", v)
		}
		for i, t := range entries {
			if e := s.checkTable(schemaPath, written+"["+strconv.Itoa(i)+"]", t); e != nil {
				return e
			}
		}
		return nil
	}
	if t, ok := v.(map[string]any); ok && k.kind == openKey && k.typ.Kind() == reflect.Map {
		// A table of any keys, whose values are all of one type.
		names := make([]string, 0, len(t))
		for name := range t {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if want := typeWords(k.typ.Elem()); want != "" && decodeAlone(k.typ.Elem(), t[name]) != nil {
				return s.typeErrorAt(written+"."+toml.Key{name}.String(), "must be "+want, t[name])
			}
		}
	}
	if err := decodeAlone(k.typ, v); err != nil {
		if want := typeWords(k.typ); want != "" && strings.Contains(err.Error(), "incompatible types") {
			return s.typeErrorAt(written, "must be "+want, v)
		}
		e := s.at(written)
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Msg = pe.Message
		} else {
			// Without the one-key document's line and key.
			e.Msg = strings.TrimPrefix(err.Error(), "toml: ")
			if i := strings.Index(e.Msg, "): "); i >= 0 && strings.Contains(e.Msg[:i], "last key") {
				e.Msg = e.Msg[i+3:]
			}
		}
		return e
	}
	return nil
}

// decodeAlone decodes v alone into a value of type t, as BurntSushi
// decodes it in the whole file: written as a document of one key.
func decodeAlone(t reflect.Type, v any) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(map[string]any{"v": v}); err != nil {
		return nil // cannot say: leave it to the whole file's error
	}
	holder := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `toml:"v"`}}))
	_, err := toml.Decode(buf.String(), holder.Interface())
	return err
}

// typeErrorAt is the error of a key whose value has the wrong type.
func (s *Scenario) typeErrorAt(written, want string, v any) *Error {
	e := s.at(written)
	e.Msg = want + ", not " + valueWords(v)
	return e
}

// at is an *Error for the key at written, placed at its value: the
// column after the key's '=' (the key's own column for a table header).
func (s *Scenario) at(written string) *Error {
	e := &Error{File: s.File, Field: written, Line: 1, Col: 1}
	if pos, ok := s.loc.find(written); ok {
		e.Line, e.Col = pos.Line, pos.Col
		if _, exact := s.loc.keys[written]; exact {
			e.Col = s.loc.valueCol(pos)
		}
	}
	return e
}

// typeWords says in words what a value of type t is written as, or ""
// for a type that decodes itself (its own error says what it wants).
func typeWords(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isValue(t) {
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer, like 5"
	case reflect.Float32, reflect.Float64:
		return "a number, like 0.5"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return `a string, like "text"`
	case reflect.Map, reflect.Struct:
		return "a table"
	case reflect.Slice:
		if e := listWords(t); e != "" {
			return e
		}
	}
	return ""
}

// listWords says what a list of type t is written as: `a list of strings,
// like ["a", "b"]`.
func listWords(t reflect.Type) string {
	elem := t.Elem()
	var of, like string
	switch {
	case elem == reflect.TypeOf(Duration{}):
		of, like = "durations", `["100ms", "1s"]`
	case elem.Kind() == reflect.String:
		of, like = "strings", `["a", "b"]`
	case elem.Kind() >= reflect.Int && elem.Kind() <= reflect.Uint64:
		of, like = "integers", `[1, 2]`
	case elem.Kind() == reflect.Float32 || elem.Kind() == reflect.Float64:
		of, like = "numbers", `[0.1, 0.5]`
	case elem.Kind() == reflect.Slice && elem.Elem().Kind() == reflect.String:
		of, like = "lists of strings", `[["n1"], ["n2", "n3"]]`
	default:
		return ""
	}
	return "a list of " + of + ", like " + like
}

// valueWords says what a decoded TOML value is: `the string "five"`.
func valueWords(v any) string {
	switch x := v.(type) {
	case string:
		return "the string " + cut(strconv.Quote(x))
	case int64:
		return fmt.Sprintf("the integer %d", x)
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return fmt.Sprintf("%v", x)
	case time.Time:
		layout := time.RFC3339Nano
		switch x.Location().String() {
		case "date-local":
			layout = time.DateOnly
		case "time-local":
			layout = "15:04:05.999999999"
		case "datetime-local":
			layout = "2006-01-02T15:04:05.999999999"
		}
		return "the date or time " + x.Format(layout)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(map[string]any{"v": x}); err == nil {
			if s, ok := strings.CutPrefix(strings.TrimSpace(buf.String()), "v = "); ok {
				return "the array " + cut(s)
			}
		}
		return "an array"
	}
	return fmt.Sprintf("%v", v)
}

// cut shortens a written value for a message.
func cut(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// valueCol is the column of the value of the key written at pos: the
// first character after its '=' that is not a space, or pos's own column
// when the line does not read so.
func (l *locator) valueCol(pos position) int {
	if pos.Line < 1 || pos.Line > len(l.lines) {
		return pos.Col
	}
	line := l.lines[pos.Line-1]
	if pos.Col-1 > len(line) {
		return pos.Col
	}
	_, rest, ok := splitKey(line[pos.Col-1:])
	if !ok {
		return pos.Col
	}
	val := strings.TrimLeft(rest, " \t")
	if val == "" {
		return pos.Col
	}
	return len(line) - len(val) + 1
}
