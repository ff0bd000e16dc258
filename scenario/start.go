package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultInitTimeout and InitTimeoutPerNode make the default of
// init_timeout: how long each node has to answer init is DefaultInitTimeout
// plus InitTimeoutPerNode for every node of the scenario, since all start
// at once and share the machine.
const (
	DefaultInitTimeout = 5 * time.Second
	InitTimeoutPerNode = 20 * time.Millisecond
)

// resolveCommand makes a foreign node's command independent of the
// directory coup runs in, by taking its relative paths from the scenario
// file's folder:
//
//   - the program (the first element), when it is a relative path with a
//     slash ("./mynode", "bin/mynode"), always; when it is a bare name
//     ("mynode", "python3"), only if a file of that name is in the
//     scenario's folder, and otherwise it is looked up on PATH as usual;
//   - each argument that does not begin with "-" and is a relative path to
//     a file or folder that exists from the scenario's folder ("node.py",
//     "lib/node.js").
//
// Absolute paths, and arguments that name nothing there, are left as
// written. Resolved paths are absolute.
func (s *Scenario) resolveCommand() {
	if len(s.Command) == 0 || s.File == "" {
		return
	}
	dir, err := filepath.Abs(filepath.Dir(s.File))
	if err != nil {
		return // no working directory: leave the command as written
	}
	prog := s.Command[0]
	switch {
	case filepath.IsAbs(prog):
	case strings.ContainsRune(prog, '/'):
		s.Command[0] = filepath.Join(dir, prog)
	default:
		if st, err := os.Stat(filepath.Join(dir, prog)); err == nil && st.Mode().IsRegular() {
			s.Command[0] = filepath.Join(dir, prog)
		}
	}
	for i := 1; i < len(s.Command); i++ {
		arg := s.Command[i]
		if arg == "" || strings.HasPrefix(arg, "-") || filepath.IsAbs(arg) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, arg)); err == nil {
			s.Command[i] = filepath.Join(dir, arg)
		}
	}
}

// InitLimit is how long each node has to answer init: init_timeout, or
// its default for this many nodes.
func (s *Scenario) InitLimit() time.Duration {
	if s.InitTimeout.Set {
		return s.InitTimeout.D
	}
	return DefaultInitTimeout + time.Duration(s.Nodes)*InitTimeoutPerNode
}
