package coup_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// The exported surface of package coup is small, every name of it has a
// doc comment, and docs/library.md lists it: the list between its
// surface markers is the one this test computes, line for line.
func TestExportedSurface(t *testing.T) {
	got, undocumented := surface(t, ".")
	for _, name := range undocumented {
		t.Errorf("%s has no doc comment", name)
	}
	doc, err := os.ReadFile("docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- surface: begin -->\n```go\n", "```\n<!-- surface: end -->"
	_, rest, ok := strings.Cut(string(doc), begin)
	listed, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/library.md has no list between %q and %q", begin, end)
	}
	want := strings.Split(strings.TrimRight(listed, "\n"), "\n")
	if !slices.Equal(got, want) {
		t.Errorf("docs/library.md lists the exported surface as\n%s\nbut package coup's is\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if n := len(topLevel(got)); n > 25 {
		t.Errorf("package coup exports %d names at top level; the surface is meant to be small", n)
	}
}

// topLevel are the lines that declare a top-level name.
func topLevel(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "\t") {
			out = append(out, l)
		}
	}
	return out
}

// surface lists a package's exported declarations as Go would declare
// them, in file order: constants, variables, functions, types with their
// exported fields (indented) and methods; and the names without a doc
// comment.
func surface(t *testing.T, dir string) (lines, undocumented []string) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg := pkgs["coup"]
	if pkg == nil {
		t.Fatalf("no package coup in %s", dir)
	}
	files := make([]string, 0, len(pkg.Files))
	for name := range pkg.Files {
		files = append(files, name)
	}
	slices.Sort(files)
	node := func(n any) string {
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, name := range files {
		for _, d := range pkg.Files[name].Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				d2 := *d
				d2.Body, d2.Doc = nil, nil
				lines = append(lines, node(&d2))
				if d.Doc == nil {
					undocumented = append(undocumented, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								lines = append(lines, d.Tok.String()+" "+n.Name)
								if s.Doc == nil && d.Doc == nil {
									undocumented = append(undocumented, n.Name)
								}
							}
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if s.Doc == nil && d.Doc == nil {
							undocumented = append(undocumented, s.Name.Name)
						}
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							eq := " "
							if s.Assign.IsValid() {
								eq = " = "
							}
							lines = append(lines, "type "+s.Name.Name+eq+node(s.Type))
							continue
						}
						lines = append(lines, "type "+s.Name.Name+" struct")
						for _, f := range st.Fields.List {
							for _, n := range f.Names {
								if !n.IsExported() {
									continue
								}
								lines = append(lines, "\t"+s.Name.Name+"."+n.Name+" "+node(f.Type))
								if f.Doc == nil && f.Comment == nil {
									undocumented = append(undocumented, s.Name.Name+"."+n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	return lines, undocumented
}

func exportedRecv(r *ast.FieldList) bool {
	typ := r.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}
