// Package scenario loads and validates scenario files: TOML documents that
// say which nodes to run, how the network behaves, which faults to inject,
// what the workload asks, which checks to run and what verdict to expect.
//
// Load rejects unknown keys and bad values with an *Error that names the
// file, the line and column, and the field (such as "faults[1].target"),
// and, for a misspelt key or named value, the nearest known one (Suggest).
// The keys are read off the toml tags of Scenario and the types it holds,
// so a key added to a struct is known at once.
//
// Overrides (ParseSet, NewOverride: the command line's --set and --seed)
// are decoded over the file's keys and go through the same validation; an
// error about one names the flag instead of a line.
//
// LoadMachine and ParseMachine read a scenario whose nodes run a Go
// machine of the caller's own, which the simulator runs in the caller's
// process (package coup, the library): no built-in algorithm, and no
// command needed.
//
// The schema, with an example of every key, is docs/scenarios.md.
package scenario
