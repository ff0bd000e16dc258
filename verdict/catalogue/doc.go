// Package catalogue carries out a catalogue run, one `coup run` over
// several scenarios or with --repeat (RunAll, given what runs one
// scenario: the real driver it needs), prints it, and records it for CI:
// summary.json at the store's root (every run's scenario, verdict,
// outcome, exit code, duration and store folder, and totals) and, when
// asked, a JUnit XML file with one test case per run.
//
// A Catalogue is made with every planned run, each "not run" until its
// result is recorded, so that the files written after each run (and those
// left by an interrupted catalogue) always list the whole plan. Every
// string that came from a run's history is made printable
// (console.Printable) before it is written, and the JUnit file is valid
// XML whatever a node wrote. docs/ci.md documents both files.
package catalogue
