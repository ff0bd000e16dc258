package scenario

import (
	"encoding"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/BurntSushi/toml"
)

// The schema of a scenario file is read off the toml tags of Scenario and
// the types it holds, so that a key added to a struct is known at once to
// the unknown-key suggestions and to --set.

// keyKind says what a key of the schema holds.
type keyKind int

const (
	// leafKey holds a value: a scalar, a duration, a target or an array
	// of scalars.
	leafKey keyKind = iota
	// tableKey holds a table of known keys ([network]).
	tableKey
	// arrayKey holds an array of tables of known keys ([[faults]]).
	arrayKey
	// openKey holds a table of any keys ([params]).
	openKey
)

// schemaKey is one key of the schema.
type schemaKey struct {
	// path is the key's dotted path, arrays of tables without an index
	// ("faults.target").
	path string
	kind keyKind
	typ  reflect.Type
	// index is the field's index path from the parent's struct.
	index []int
}

var (
	schemaOnce sync.Once
	schemaKeys map[string]*schemaKey // by path
)

// schema returns every key of a scenario file, by path.
func schema() map[string]*schemaKey {
	schemaOnce.Do(func() {
		schemaKeys = map[string]*schemaKey{}
		walkSchema("", reflect.TypeOf(Scenario{}))
	})
	return schemaKeys
}

var (
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	tomlUnmarshaler = reflect.TypeOf((*toml.Unmarshaler)(nil)).Elem()
)

// isValue reports whether t decodes itself from a TOML value.
func isValue(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(textUnmarshaler) || p.Implements(tomlUnmarshaler)
}

func walkSchema(prefix string, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		k := &schemaKey{path: path, kind: leafKey, typ: f.Type, index: f.Index}
		schemaKeys[path] = k
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && !isValue(ft.Elem()) {
			ft = ft.Elem()
		}
		switch {
		case isValue(ft):
		case ft.Kind() == reflect.Struct:
			k.kind = tableKey
			walkSchema(path, ft)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !isValue(ft.Elem()):
			k.kind = arrayKey
			walkSchema(path, ft.Elem())
		case ft.Kind() == reflect.Map:
			k.kind = openKey
		}
	}
}

// childKeys lists the names of the keys directly under the table at path
// ("" for the top level), sorted.
func childKeys(path string) []string {
	var out []string
	for p := range schema() {
		parent, name := splitPath(p)
		if parent == path {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// splitPath splits "a.b.c" into "a.b" and "c".
func splitPath(p string) (string, string) {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// suggestKey returns the known key that an unknown one, at path (dotted,
// without array indices), most likely meant: a close name in the same
// table (latnecy: latency), else a name in the same table whose words the
// unknown one holds (recovery_window, recoveryWindow: recovery), else the
// same name, or the same words, in another table. It returns "" when
// nothing is close.
func suggestKey(path string) string {
	parent, name := splitPath(path)
	in := func(s string) string {
		if parent == "" {
			return s
		}
		return parent + "." + s
	}
	if s := Suggest(name, childKeys(parent)); s != "" {
		return in(s)
	}
	if s := suggestByWords(name, childKeys(parent)); s != "" {
		return in(s)
	}
	var elsewhere []string
	for p, k := range schema() {
		if _, n := splitPath(p); slices.Equal(keyWords(n), keyWords(name)) && k.kind != openKey {
			elsewhere = append(elsewhere, p)
		}
	}
	slices.Sort(elsewhere)
	if len(elsewhere) > 0 {
		return elsewhere[0]
	}
	return ""
}

// suggestByWords returns the known key whose words the unknown name holds
// in a row ("recovery" for "recovery_window"), the one of most words when
// several do, or "". A known key of one word of fewer than three letters
// ("at", "to") is too common a part to suggest.
func suggestByWords(name string, known []string) string {
	words := keyWords(name)
	best, most := "", 0
	for _, k := range known {
		kw := keyWords(k)
		if len(kw) <= most || (len(kw) == 1 && len(k) < 3) {
			continue
		}
		for i := 0; i+len(kw) <= len(words); i++ {
			if slices.Equal(words[i:i+len(kw)], kw) {
				best, most = k, len(kw)
				break
			}
		}
	}
	return best
}

// keyWords splits a key's name into its words, lower case: at '_', '-'
// and where a lower-case letter meets an upper-case one
// ("initTimeout", "init-timeout" and "init_timeout" are init, timeout).
func keyWords(name string) []string {
	var words []string
	var w []rune
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		w = append(w, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return words
}

// indexedSuggestion writes a suggested schema path with the array indices
// of the written key it replaces: "faults.target" for "faults[1].tagret"
// is "faults[1].target". Indices are kept only while the two paths share
// their tables.
func indexedSuggestion(written, suggestion string) string {
	w := strings.Split(written, ".")
	s := strings.Split(suggestion, ".")
	for i := 0; i < len(w) && i < len(s)-1; i++ {
		name, _, _ := strings.Cut(w[i], "[")
		if name != s[i] {
			break
		}
		s[i] = w[i]
	}
	return strings.Join(s, ".")
}
