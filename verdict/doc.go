// Package verdict judges a history: it runs the checks the history's meta
// event names (or its algorithm's and workload's defaults), composes their
// verdicts (false beats unknown beats true), compares the result with what
// the scenario expects, and gives the exit code of the interface contract.
//
// Its input is a history alone, so a stored history judged by `coup check`
// gets the verdict its run got. Its output, Results, is what results.json
// holds (docs/results.md documents every field) and what the report draws;
// its Headline is the verdict and the outcome in one sentence, naming the
// checks the scenario allows either way and what each gave. Summary is
// what the console shows of it, every string that came from the history
// made printable first, so that no node can forge a line.
//
// The use:
//
//	res, err := verdict.Evaluate(h)    // every check, the stats, the outcome
//	res.Failed(err)                    // a run that did not end as planned: never as expected
//	fmt.Print(res.Summary())
//	os.Exit(res.ExitCode)
//
// A history whose run did not start (its unstarted event) is not judged:
// Evaluate's results hold only why (NotStarted), with an input error's
// exit code when the start failed and unknown's when it was interrupted.
// An incomplete history (no end event: the run was interrupted or killed)
// is never unexpected: its outcome is unknown, and the notes say what the
// prefix showed. The subpackage catalogue records the verdicts of many
// runs for CI: summary.json and a JUnit file.
package verdict
