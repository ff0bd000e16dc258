// Package scenario loads and validates scenario files: TOML documents that
// say which nodes to run, how the network behaves, which faults to inject,
// what the workload asks, which checks to run and what verdict to expect.
//
// Load rejects unknown keys and bad values with an *Error that names the
// file, the line and column, and the field (such as "faults[1].target").
// The schema, with an example of every key, is docs/scenarios.md.
package scenario
