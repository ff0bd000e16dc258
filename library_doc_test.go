package coup_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/coupharness/coup"
)

// listingRE finds docs/library.md's listings: a fenced block right after a
// comment that names it.
var listingRE = regexp.MustCompile("(?s)<!-- listing: (\\S+) -->\n```\\w+\n(.*?)```\n")

// libraryListings returns docs/library.md's listings by name.
func libraryListings(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range listingRE.FindAllStringSubmatch(string(b), -1) {
		if _, dup := out[m[1]]; dup {
			t.Fatalf("docs/library.md: two listings named %s", m[1])
		}
		out[m[1]] = m[2]
	}
	for _, name := range []string{"setup", "check", "mine.go", "mine_test.go", "cmd/mynode/main.go", "Machine", "Env"} {
		if out[name] == "" {
			t.Fatalf("docs/library.md has no listing %q (<!-- listing: %s --> before its block)", name, name)
		}
	}
	return out
}

// docs/library.md works as written. From an empty folder, its setup makes
// a module that requires coup, replaced by this clone; with the whole
// machine's two files in it, its check (go mod tidy, go test) passes; the
// machine's main builds into a node that answers init. The module takes
// nothing of memberlist's or zerolog's. The go command finds modules as
// the environment says (the module proxy, or the cache), as a reader's
// would.
func TestLibraryDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own: seconds")
	}
	listings := libraryListings(t)
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(root, `'"\$`+"`") {
		t.Skipf("the clone's path %q cannot be quoted for the shell simply", root)
	}

	// The setup, with the reader's clone being this one.
	setup := listings["setup"]
	first, rest, _ := strings.Cut(setup, "\n")
	if !strings.HasPrefix(first, "coup=") {
		t.Fatalf("the setup's first line is %q, want coup=PATH (the reader's clone)", first)
	}
	dir := t.TempDir()
	if out, err := run(t, dir, "sh", "-ec", "coup='"+root+"'\n"+rest); err != nil {
		t.Fatalf("the setup, in an empty folder: %v\n%s", err, out)
	}
	mine := filepath.Join(dir, "mine")
	for _, name := range []string{"mine.go", "mine_test.go", "cmd/mynode/main.go"} {
		p := filepath.Join(mine, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(listings[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, mine, "sh", "-ec", listings["check"])
	if err != nil {
		t.Fatalf("the check: %v\n%s", err, out)
	}
	if !strings.Contains(out, "ok  \texample.com/mine") {
		t.Errorf("the check's go test did not pass example.com/mine:\n%s", out)
	}
	if out, err := run(t, mine, "gofmt", "-l", "."); err != nil || out != "" {
		t.Errorf("the listings are not gofmt'ed: %v\n%s", err, out)
	}

	// What the module takes: no module of memberlist's or zerolog's, in
	// its module graph or in what it builds.
	mods, err := run(t, mine, "go", "list", "-m", "all")
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, mods)
	}
	pkgs, err := run(t, mine, "go", "list", "-deps", "-test", "./...")
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, pkgs)
	}
	for _, m := range []string{"github.com/hashicorp/memberlist", "github.com/miekg/dns", "github.com/rs/zerolog"} {
		if strings.Contains(mods, m) || strings.Contains(pkgs, m) {
			t.Errorf("a module that uses coup as a library takes %s:\n%s", m, mods)
		}
	}

	// The real node.
	bin := filepath.Join(t.TempDir(), "mynode")
	if out, err := run(t, mine, "go", "build", "-o", bin, "./cmd/mynode"); err != nil {
		t.Fatalf("go build ./cmd/mynode: %v\n%s", err, out)
	}
	node := exec.Command(bin)
	node.Stdin = strings.NewReader(`{"src":"c0","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2"]}}` + "\n")
	var stdout bytes.Buffer
	node.Stdout = &stdout
	if err := node.Run(); err != nil || !strings.Contains(stdout.String(), `"type":"init_ok"`) {
		t.Errorf("mynode given an init: %v, wrote %q; want an init_ok", err, stdout.String())
	}
}

// run runs a command in dir, with the environment's module settings (no
// workspace, and none of coup's own variables), and returns its output.
func run(t *testing.T, dir string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "COUP_SEED=", "COUP_SEEDS=", "COUP_SHRINK=", "COUP_STORE=")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// docs/library.md's listings of Machine and Env name every method of the
// interfaces, with as many parameters and results, and no other method.
func TestLibraryDocInterfaces(t *testing.T) {
	listings := libraryListings(t)
	for _, tt := range []struct {
		name string
		typ  reflect.Type
	}{
		{"Machine", reflect.TypeFor[coup.Machine]()},
		{"Env", reflect.TypeFor[coup.Env]()},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "library.md", "package p\n"+listings[tt.name], 0)
		if err != nil {
			t.Fatalf("%s's listing: %v", tt.name, err)
		}
		documented := map[string][2]int{}
		ast.Inspect(f, func(n ast.Node) bool {
			if it, ok := n.(*ast.InterfaceType); ok {
				for _, m := range it.Methods.List {
					if ft, ok := m.Type.(*ast.FuncType); ok {
						documented[m.Names[0].Name] = [2]int{count(ft.Params), count(ft.Results)}
					}
				}
			}
			return true
		})
		var names []string
		for i := range tt.typ.NumMethod() {
			m := tt.typ.Method(i)
			names = append(names, m.Name)
			got, ok := documented[m.Name]
			switch {
			case !ok:
				t.Errorf("docs/library.md: %s's listing lacks %s", tt.name, m.Name)
			case got != [2]int{m.Type.NumIn(), m.Type.NumOut()}:
				t.Errorf("docs/library.md: %s.%s has %d parameters and %d results in the listing, %d and %d in the code", tt.name, m.Name, got[0], got[1], m.Type.NumIn(), m.Type.NumOut())
			}
		}
		for name := range documented {
			if !slices.Contains(names, name) {
				t.Errorf("docs/library.md: %s's listing has %s, which the code has not", tt.name, name)
			}
		}
	}
}

// count is how many parameters or results a field list declares.
func count(fl *ast.FieldList) int {
	if fl == nil {
		return 0
	}
	n := 0
	for _, f := range fl.List {
		n += max(1, len(f.Names))
	}
	return n
}
