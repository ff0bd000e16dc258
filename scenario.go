package coup

import (
	"errors"
	"fmt"

	"github.com/coupharness/coup/scenario"
)

// Scenario is a scenario: the keys of a scenario file
// (docs/scenarios.md) as a Go value. Load reads one from a file; a value
// built in Go is validated as a file is when it runs. A scenario for your
// own machine names no built-in algorithm, may use any workload (lin-kv
// included), and needs a command only to run under coup run. It is
// scenario.Scenario.
type Scenario = scenario.Scenario

// Load reads and validates a scenario file for a machine of your own: its
// errors name the file, line, column and key.
func Load(path string) (*Scenario, error) { return scenario.LoadMachine(path) }

// prepare validates a scenario for a machine of the caller's own. One
// that Load read is used as it is; any other, such as a Go value, is
// written as a file and read back as Load reads one, so that it meets the
// same checks and gets the same defaults.
func prepare(sc *Scenario) (*Scenario, error) {
	if sc == nil {
		return nil, errors.New("coup: no scenario")
	}
	if sc.OwnMachine() {
		return sc, nil
	}
	path := sc.File
	if path == "" {
		if sc.Name == "" {
			return nil, errors.New("coup: a scenario built in Go needs a Name")
		}
		path = sc.Name
	}
	valid, err := scenario.ParseMachine(path, string(sc.Encode("")))
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) && sc.File == "" {
			// The positions are in text coup wrote, not the caller's.
			return nil, fmt.Errorf("scenario %s: %s: %s", path, se.Field, se.Msg)
		}
		return nil, err
	}
	valid.Seed = sc.Seed
	if valid.Seed == 0 {
		valid.Seed = 1 // a file's default
	}
	return valid, nil
}
