package scenario

import (
	"errors"
	"fmt"
	"os"
)

// LoadMachine is Load for a scenario whose nodes run a state machine of
// the caller's own, simulated in the caller's process (package coup, the
// library): see ParseMachine.
func LoadMachine(path string, sets ...Override) (*Scenario, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read: %v", errors.Unwrap(err))}
	}
	return ParseMachine(path, string(src), sets...)
}

// ParseMachine is Parse for a scenario whose nodes run a state machine of
// the caller's own. It is validated as a scenario of a node program of
// your own (a command) is: the algorithm is any name, for the history and
// the report, or none; the parameters are the machine's to check; the
// workload may be any kind, lin-kv and echo included, and its kind tells
// the checks what the nodes do. Unlike such a scenario it needs no
// command: the simulator runs the machine itself. A command it has is
// kept, so that the same file runs with coup run as real processes.
func ParseMachine(path, src string, sets ...Override) (*Scenario, error) {
	return parse(path, src, true, sets)
}

// OwnMachine reports whether the scenario was read for a machine of the
// caller's own (LoadMachine, ParseMachine).
func (s *Scenario) OwnMachine() bool { return s.machine }

// foreign reports whether the nodes run something other than a built-in
// algorithm: a node program of their own (command), or the caller's
// machine.
func (s *Scenario) foreign() bool { return s.Command != nil || s.machine || s.Server != nil }
