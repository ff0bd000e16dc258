// Package explore is coup's search room: it finds the fault schedule
// nobody wrote, and shrinks a failing run to a small scenario that fails
// the same way. It knows no driver: a driver is handed to it as a Runner
// (the simulator, node processes on pipes, real servers), and it speaks
// only the scenario, the history, the verdict and the checks.
//
// What lives here:
//
//   - Runner: one way to run a scenario and get its judged run back.
//     Exact runners (the simulator) give the same run for the same
//     scenario and seed; the others do not, so a search re-runs a
//     candidate and counts.
//   - Signature and Kind: how a run failed, in a form that two runs
//     failing for the same cause share: the first violation's check and
//     kind, the cause the history shows and the faults in force;
//     campaigns and merges count failures by it, and a shrink keeps it.
//   - Findability: how often a failure showed (k of N runs), its interval,
//     and how many runs a fix must survive.
//   - Shrink: a failing scenario made smaller by moves on scenarios
//     (fewer faults by Ddmin, repeated faults made into their
//     occurrences, fewer nodes and clients, shorter and weaker faults, a
//     time made into the event that explains it), each candidate run
//     through the Runner: once at a seed on an exact one, several times
//     on another, kept by a sequential rule (Rule) when it fails the same
//     way often enough. Measure counts how often a scenario fails so;
//     ShrinkLoop is coup shrink around them (find, shrink, write the
//     shrunk scenario with its header, measure it afresh).
//   - Stored: a real driver's Runner, its run read back from the store
//     (ReadBack); each real driver offers one beside it.
//   - Ddmin: delta debugging, the engine of shrinking.
//   - Sweep files: a sweep's or campaign's results as JSON lines, split
//     into shards (Shard, ParseShard) and merged by signature (Merge).
//   - Campaign: schedules drawn from a scenario's vocabulary (its
//     [explore] table), each a Schedule of faults put into a copy of the
//     scenario and run by a Runner, until a budget is spent; random (the
//     baseline) or guided by the Features of each run's history (Abstract)
//     and the Moments it showed. Its results file (CampaignWriter,
//     ReadCampaign) splits by lanes into shards and merges by signature
//     (MergeCampaigns); a Tally counts its runs and failures.
//
// A campaign's loop, per lane (Campaign.Run):
//
//	next: the lane's strategy makes run t's schedule from what its runs
//	    up to t−Workers showed, without a fault that cannot act
//	    (actable: a restart with no node down), with a fault that starts
//	    by itself (startable) and not one the lane ran before; the schedule becomes
//	    a scenario file, read back and validated
//	run: the Runner runs it and judges it with the scenario's checks
//	judge: the history's features and moments go to the lane, its faults
//	    that never fired are counted; a failing
//	    run is kept whole in the store (an exact runner's run again into
//	    it) with its scenario file, a passing run's folder removed; the
//	    results file gets its line, the tally its count
package explore
