package scenario

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	tparse "text/template/parse"
	"time"
)

// The keys that adapt a server description without copying it: another
// program, arguments added to the command, and the server's own timeouts
// as the templates write them.

// serverTimeout is one of the server's own timeouts: its key, the
// template field that writes it, and where the scenario holds it.
type serverTimeout struct {
	key, field string
	d          *Duration
}

func (sv *Server) timeouts() []serverTimeout {
	if sv == nil {
		return nil
	}
	return []serverTimeout{
		{"election_timeout", "ElectionTimeout", &sv.ElectionTimeout},
		{"heartbeat_every", "HeartbeatEvery", &sv.HeartbeatEvery},
		{"tick", "Tick", &sv.Tick},
	}
}

// validateAdaptations checks program, extra_args_before and the
// timeouts' values, and resolves the program.
func (s *Scenario) validateAdaptations() error {
	sv := s.Server
	if err := s.resolveProgram(); err != nil {
		return err
	}
	sv.extraAt = 0
	if sv.ExtraArgsBefore != "" {
		i := slices.Index(sv.Command, sv.ExtraArgsBefore)
		switch {
		case i < 0:
			return s.errorf("server.extra_args_before", "%q is not an element of the command", sv.ExtraArgsBefore)
		case i == 0:
			return s.errorf("server.extra_args_before", "%q is the program: arguments go after it", sv.ExtraArgsBefore)
		}
		sv.extraAt = i
	}
	for _, t := range sv.timeouts() {
		at := "server." + t.key
		if err := s.duration(at, t.d, 0, true); err != nil {
			return err
		}
		if t.d.D%time.Millisecond != 0 {
			return s.errorf(at, "must be a whole number of milliseconds, got %q", t.d.Raw)
		}
	}
	return nil
}

// resolveProgram finds the program: a path is taken from the scenario's
// folder, and made absolute (in what Encode writes too, so that the
// scenario reads the same from anywhere); a bare name, from the
// scenario's folder when a file of that name is there (as a node's
// command is), else from PATH.
func (s *Scenario) resolveProgram() error {
	sv := s.Server
	if sv.Program == "" {
		return nil
	}
	dir, err := filepath.Abs(filepath.Dir(s.File))
	if err != nil {
		dir = filepath.Dir(s.File)
	}
	prog := sv.Program
	if !strings.ContainsRune(prog, '/') {
		if st, err := os.Stat(filepath.Join(dir, prog)); err == nil && st.Mode().IsRegular() {
			prog = filepath.Join(dir, prog)
		} else if _, err := exec.LookPath(prog); err != nil {
			return s.errorf("server.program", "%q is not found on PATH (%s) nor in the scenario's folder: give its path, or install it", prog, os.Getenv("PATH"))
		} else {
			return nil
		}
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	st, err := os.Stat(prog)
	switch {
	case err != nil && prog == sv.Program:
		return s.errorf("server.program", "%q does not exist", sv.Program)
	case err != nil:
		return s.errorf("server.program", "%q does not exist (%s, from the scenario's folder)", sv.Program, prog)
	case st.IsDir():
		return s.errorf("server.program", "%q is a folder, not a program", sv.Program)
	case st.Mode()&0o111 == 0:
		return s.errorf("server.program", "%q is not executable (%s)", sv.Program, st.Mode())
	}
	sv.Program = prog
	s.written.Program = prog
	return nil
}

// checkTimeoutsUsed refuses a timeout that the scenario sets and that no
// template writes (it would change nothing), and a template that writes
// one that is not set (it would write 0).
func (s *Scenario) checkTimeoutsUsed() error {
	sv := s.Server
	used := map[string]string{} // field -> the first template that uses it
	for _, t := range sv.tmpl.all() {
		for _, f := range fieldsUsed(t.Tree.Root) {
			if _, ok := used[f]; !ok {
				used[f] = t.Name()
			}
		}
	}
	var have []string
	for _, t := range sv.timeouts() {
		if _, ok := used[t.field]; ok {
			have = append(have, t.key)
		}
	}
	sv.timeoutsUsed = have
	written := s.written.timeouts()
	for i, t := range sv.timeouts() {
		at, uses := used[t.field]
		switch {
		case written[i].d.Set && !uses:
			hint := "it has no timeouts of its own"
			if len(have) > 0 {
				hint = "its timeouts are " + strings.Join(have, " and ")
			}
			return s.errorf("server."+t.key, "no template of this description writes it ({{.%s.Ms}}), so it would change nothing: %s", t.field, hint)
		case uses && !t.d.Set:
			return s.errorf(at, "writes .%s, but the description sets no %s: give one, like %s = \"1s\"", t.field, t.key, t.key)
		}
	}
	return nil
}

// fieldsUsed lists the fields of the template's data that the tree
// names: .Tick, and $.Tick inside a range.
func fieldsUsed(n tparse.Node) []string {
	var out []string
	var walk func(n tparse.Node)
	walk = func(n tparse.Node) {
		switch n := n.(type) {
		case *tparse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *tparse.ActionNode:
			walk(n.Pipe)
		case *tparse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *tparse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *tparse.FieldNode:
			out = append(out, n.Ident[0])
		case *tparse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				out = append(out, n.Ident[1])
			}
		case *tparse.ChainNode:
			walk(n.Node)
		case *tparse.IfNode:
			walk(&n.BranchNode)
		case *tparse.RangeNode:
			walk(&n.BranchNode)
		case *tparse.WithNode:
			walk(&n.BranchNode)
		case *tparse.BranchNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *tparse.TemplateNode:
			walk(n.Pipe)
		}
	}
	walk(n)
	return out
}

// all lists every template that ServerNode fills in.
func (t *serverTemplates) all() []*template.Template {
	out := slices.Concat(t.command, t.extraArgs, t.replace)
	for _, name := range sortedKeys(t.files) {
		out = append(out, t.files[name])
	}
	for _, name := range sortedKeys(t.env) {
		out = append(out, t.env[name])
	}
	for _, p := range t.polls {
		for _, tt := range []*template.Template{p.tcp, p.http, p.file} {
			if tt != nil {
				out = append(out, tt)
			}
		}
		out = append(out, p.command...)
	}
	return out
}

// writes reports whether a template of the description writes the
// timeout of that key (after validation).
func (sv *Server) writes(key string) bool { return slices.Contains(sv.timeoutsUsed, key) }
