package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Override sets one key of a scenario over what its file says, from the
// command line: `--set network.latency=5ms`, `--seed 3`. The value goes
// through the same decoding and the same validation as the file's, and an
// error about it names the flag instead of a line of the file.
type Override struct {
	// Key is the key's path: dotted through tables ("network.latency"),
	// with an index for an entry of an array of tables ("faults[0].at" or
	// "faults.0.at").
	Key string
	// Value is the value as the command line wrote it; a string needs no
	// quotes, an array is written as in TOML (`ids=[5,4,3]`).
	Value string
	// Flag is how the command line wrote the override, for errors
	// ("--set nodes=9").
	Flag string

	parts []pathPart // Key, parsed
	lit   string     // Value as a TOML literal for the key's type
}

// pathPart is one table of an override's key, with the index of the entry
// when the table is an array of tables.
type pathPart struct {
	name  string
	index int // -1: none
}

// ParseSet reads the argument of --set, "key=value", and checks the key
// against the schema and the value against the key's type.
func ParseSet(arg string) (Override, error) {
	key, value, ok := strings.Cut(arg, "=")
	if !ok {
		return Override{}, fmt.Errorf("--set %s: want key=value, like nodes=9 or network.latency=5ms", arg)
	}
	return NewOverride(key, value, "--set "+arg)
}

// NewOverride makes the override of key with value; flag is how the
// command line wrote it. It checks the key against the schema and the
// value against the key's type; the rest is checked with the scenario.
func NewOverride(key, value, flag string) (Override, error) {
	o := Override{Key: strings.TrimSpace(key), Value: value, Flag: flag}
	fail := func(format string, args ...any) (Override, error) {
		return Override{}, fmt.Errorf("%s: %s", flag, fmt.Sprintf(format, args...))
	}
	parts, err := parseKey(o.Key)
	if err != nil {
		return fail("%v", err)
	}
	o.parts = parts
	schemaPath := ""
	var leaf *schemaKey
	for i, p := range parts {
		if schemaPath != "" {
			schemaPath += "."
		}
		schemaPath += p.name
		k, ok := schema()[schemaPath]
		if !ok {
			msg := fmt.Sprintf("unknown key %s", o.Key)
			if s := suggestKey(schemaPath); s != "" {
				fixed := indexedSuggestion(canonical(parts[:i+1]), s)
				if p.index >= 0 && !strings.HasSuffix(fixed, "]") {
					fixed += fmt.Sprintf("[%d]", p.index)
				}
				if rest := canonical(parts[i+1:]); rest != "" {
					fixed += "." + rest
				}
				msg += fmt.Sprintf(" (did you mean %s?)", fixed)
			}
			return fail("%s; docs/scenarios.md lists the keys", msg)
		}
		last := i == len(parts)-1
		switch k.kind {
		case arrayKey:
			if p.index < 0 {
				return fail("%s is an array of tables: set a key of one entry, like %s[0].%s", schemaPath, schemaPath, childKeys(schemaPath)[0])
			}
			if last {
				return fail("%s[%d] is a table: set one of its keys (%s)", schemaPath, p.index, strings.Join(childKeys(schemaPath), ", "))
			}
		case tableKey:
			if p.index >= 0 {
				return fail("%s is not an array: it takes no index", schemaPath)
			}
			if last {
				return fail("%s is a table: set one of its keys (%s)", schemaPath, strings.Join(childKeys(schemaPath), ", "))
			}
		case openKey:
			if p.index >= 0 || i != len(parts)-2 || parts[i+1].index >= 0 {
				return fail("set one key of %s, like %s.name=value", schemaPath, schemaPath)
			}
			o.lit = anyLiteral(value)
			return o, nil
		case leafKey:
			if p.index >= 0 || !last {
				return fail("%s holds a value, not a table", schemaPath)
			}
			leaf = k
		}
	}
	lit, err := literal(leaf.typ, value)
	if err != nil {
		return fail("%v", err)
	}
	o.lit = lit
	return o, nil
}

// parseKey splits "faults[0].at" or "faults.0.at" into its parts.
func parseKey(key string) ([]pathPart, error) {
	if key == "" {
		return nil, fmt.Errorf("no key before '='")
	}
	var out []pathPart
	for _, s := range strings.Split(key, ".") {
		if n, err := strconv.Atoi(s); err == nil && len(out) > 0 && out[len(out)-1].index < 0 {
			if n < 0 {
				return nil, fmt.Errorf("negative index in %s", key)
			}
			out[len(out)-1].index = n
			continue
		}
		p := pathPart{name: s, index: -1}
		if name, idx, ok := strings.Cut(s, "["); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if err != nil || !strings.HasSuffix(idx, "]") || n < 0 {
				return nil, fmt.Errorf("bad index in %s: write faults[0].at or faults.0.at", key)
			}
			p = pathPart{name: name, index: n}
		}
		if p.name == "" {
			return nil, fmt.Errorf("empty key in %s", key)
		}
		out = append(out, p)
	}
	return out, nil
}

// canonical is the key as validation names it: "faults[0].at".
func (o *Override) canonical() string { return canonical(o.parts) }

func canonical(parts []pathPart) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.name)
		if p.index >= 0 {
			fmt.Fprintf(&b, "[%d]", p.index)
		}
	}
	return b.String()
}

// literal writes value as the TOML literal for a field of type t, or says
// why it cannot be one.
func literal(t reflect.Type, value string) (string, error) {
	if isValue(t) {
		// A duration, a target (a node, a pick, or an array of nodes), or
		// a ready probe (a port, or an inline table).
		if t == reflect.TypeOf(Target{}) && strings.HasPrefix(strings.TrimSpace(value), "[") {
			return arrayLiteral(value)
		}
		if t == reflect.TypeOf(Probe{}) && strings.HasPrefix(strings.TrimSpace(value), "{") {
			return strings.TrimSpace(value), nil // a probe's inline table, read as TOML
		}
		return tomlString(value), nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	v := strings.TrimSpace(value)
	switch t.Kind() {
	case reflect.String:
		return tomlString(value), nil
	case reflect.Bool:
		if v != "true" && v != "false" {
			return "", fmt.Errorf("want true or false, got %q", value)
		}
		return v, nil
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("want an integer, got %q", value)
		}
		return strconv.FormatInt(n, 10), nil
	case reflect.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("want a number, got %q", value)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s, nil
	case reflect.Slice:
		return arrayLiteral(value)
	}
	return "", fmt.Errorf("cannot be set from the command line")
}

// arrayLiteral checks that value is a TOML array.
func arrayLiteral(value string) (string, error) {
	var doc map[string]any
	if _, err := toml.Decode("v = "+value, &doc); err != nil {
		return "", fmt.Errorf("want an array written as in TOML, like [\"n1\", \"n2\"] or [5, 4, 3]: %v", strings.TrimPrefix(err.Error(), "toml: "))
	}
	if _, ok := doc["v"].([]any); !ok {
		return "", fmt.Errorf("want an array written as in TOML, like [\"n1\", \"n2\"] or [5, 4, 3]")
	}
	return value, nil
}

// anyLiteral is value as written when it is a TOML value (a number, a
// boolean, an array, a quoted string), else value as a string: the
// literal of a key of an open table such as params.
func anyLiteral(value string) string {
	var doc map[string]any
	if _, err := toml.Decode("v = "+value, &doc); err == nil {
		if _, table := doc["v"].(map[string]any); !table {
			return value
		}
	}
	return tomlString(value)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// apply decodes the override into s, over what the file said: the key's
// table is found by the field tags, and the one key decoded into it as
// the file's keys were.
func (s *Scenario) apply(o *Override) error {
	v := reflect.ValueOf(s).Elem()
	path := ""
	for _, p := range o.parts[:len(o.parts)-1] {
		if path != "" {
			path += "."
		}
		path += p.name
		k := schema()[path]
		f := v.FieldByIndex(k.index)
		if k.kind == openKey {
			v = f // decode "name = value" into the map
			break
		}
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			}
			f = f.Elem()
		}
		if k.kind == arrayKey {
			if p.index >= f.Len() {
				what := "no entry"
				if f.Len() == 1 {
					what = "only " + path + "[0]"
				} else if f.Len() > 1 {
					what = fmt.Sprintf("entries %s[0] to %s[%d]", path, path, f.Len()-1)
				}
				return &Error{File: s.File, Field: o.canonical(), Flag: o.Flag,
					Msg: fmt.Sprintf("%s[%d] is not in the file, which has %s", path, p.index, what)}
			}
			f = f.Index(p.index)
		}
		v = f
	}
	last := o.parts[len(o.parts)-1].name
	if _, err := toml.Decode(tomlKey(last)+" = "+o.lit, v.Addr().Interface()); err != nil {
		return &Error{File: s.File, Field: o.canonical(), Flag: o.Flag, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	return nil
}

// tomlKey writes a key for a TOML document, quoted when it is not bare.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return tomlString(k)
		}
	}
	return k
}

// overrideAt returns the override that set path or a key under it, or nil.
func (s *Scenario) overrideAt(path string) *Override {
	for i := len(s.sets) - 1; i >= 0; i-- {
		o := &s.sets[i]
		c := o.canonical()
		if c == path || strings.HasPrefix(c, path+".") || strings.HasPrefix(c, path+"[") {
			return o
		}
	}
	return nil
}

// flags lists the overrides as the command line wrote them.
func (s *Scenario) flags() string {
	out := make([]string, len(s.sets))
	for i, o := range s.sets {
		out[i] = o.Flag
	}
	return strings.Join(out, ", ")
}
