package scenario

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// keyReference is the file, and the section of it, that lists every key.
const (
	keyReference = "../docs/scenarios.md"
	keySection   = "## Every key"
)

var (
	keyRowRE     = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")
	keyHeadingRE = regexp.MustCompile("^### `\\[\\[?([a-z_.]+)\\]\\]?`")
)

// documentedKeys reads the section "Every key" of docs/scenarios.md: each
// row's key and the type it gives, and the tables its headings name.
func documentedKeys(t *testing.T) (rows map[string]string, headings map[string]bool, order []string) {
	t.Helper()
	b, err := os.ReadFile(keyReference)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+keySection+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", keyReference, keySection)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	rows, headings = map[string]string{}, map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if m := keyHeadingRE.FindStringSubmatch(line); m != nil {
			headings[m[1]] = true
			order = append(order, line)
		}
		if m := keyRowRE.FindStringSubmatch(line); m != nil {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("%s, %q: the key %s has two rows", keyReference, keySection, m[1])
			}
			rows[m[1]] = strings.TrimSpace(m[2])
		}
	}
	return rows, headings, order
}

// docType is how the reference writes the type of a key of Go type t.
func docType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeOf(Duration{}):
		return "duration"
	case reflect.TypeOf(Target{}), reflect.TypeOf(ClientHosts{}):
		return "string or list of strings"
	case reflect.TypeOf(Probe{}):
		return "string or table"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct:
		return "table"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "table of strings"
		}
		return "table"
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Struct && !isValue(e) {
			return "array of tables"
		}
		switch e := docType(t.Elem()); {
		case strings.HasPrefix(e, "list of "):
			return "list of lists of " + strings.TrimPrefix(e, "list of ")
		case e == "string or list of strings":
			return "list"
		default:
			return "list of " + plural(e)
		}
	}
	return t.String()
}

func plural(s string) string {
	switch s {
	case "boolean", "integer", "number", "duration", "string", "table":
		return s + "s"
	}
	return s
}

// owner says where a key of the schema is declared: the Go field and its
// struct, for the message that asks for the key's row.
func owner(path string) string {
	parentPath, name := splitPath(path)
	parent := reflect.TypeOf(Scenario{})
	if parentPath != "" {
		parent = schema()[parentPath].typ
	}
	for parent.Kind() == reflect.Pointer || parent.Kind() == reflect.Slice {
		parent = parent.Elem()
	}
	f := parent.FieldByIndex(schema()[path].index)
	return fmt.Sprintf("field %s of %s, toml:%q", f.Name, parent, name)
}

// The reference lists every key coup reads, with the type coup reads it
// as, and no key coup does not read. A key added to a struct of scenario/
// fails this test until its row is written; the message says which row,
// and in which table.
func TestEveryKeyIsInTheReference(t *testing.T) {
	rows, headings, order := documentedKeys(t)
	var paths []string
	for p := range schema() {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		k := schema()[p]
		want := docType(k.typ)
		top := !strings.Contains(p, ".")
		if top && (k.kind == tableKey || k.kind == arrayKey) {
			if !headings[p] {
				t.Errorf("%s, section %q: the table %s (%s) has no heading of its own: add one, \"### `[%s]`\", and a row for each of its keys", keyReference, keySection, p, owner(p), p)
			}
			continue
		}
		got, ok := rows[p]
		if !ok {
			table := "the first table, \"The top level\""
			if top := strings.SplitN(p, ".", 2)[0]; top != p {
				table = "the table under the heading naming [" + top + "]"
				for _, h := range order {
					if m := keyHeadingRE.FindStringSubmatch(h); m != nil && m[1] == top {
						table = "the table under " + strings.TrimPrefix(h, "### ")
					}
				}
			}
			t.Errorf("%s, section %q: the key %s (%s) is missing: add the row\n\t| `%s` | %s | what it holds, its default ([more](where it is explained)) |\nto %s", keyReference, keySection, p, owner(p), p, want, table)
			continue
		}
		if got != want {
			t.Errorf("%s, section %q: the key %s is given as %q; coup reads it as %q (%s)", keyReference, keySection, p, got, want, owner(p))
		}
	}
	for p := range rows {
		if _, ok := schema()[p]; !ok {
			t.Errorf("%s, section %q: the row of %s names no key coup reads: remove it, or spell it as the toml tag of scenario/ does", keyReference, keySection, p)
		}
	}
	for h := range headings {
		if k, ok := schema()[h]; !ok || (k.kind != tableKey && k.kind != arrayKey) {
			t.Errorf("%s, section %q: the heading [%s] names no table coup reads", keyReference, keySection, h)
		}
	}
}
