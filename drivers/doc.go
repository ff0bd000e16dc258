// Package drivers chooses the driver that runs a scenario: the
// simulator (package sim), node processes on pipes (package harness) or
// real servers (package servers). It is the one place that knows all
// three; each driver offers its own runner, and the search room asks a
// Runner for runs without knowing which one it has.
//
//	d, err := drivers.Choose(sc, name)   // "" for the scenario's default, Real for coup run's
//	res, dir, err := d.Run(ctx, sc, opts) // one run, stored
//	r, err := d.Runner(sc, opts)          // the driver as the search room sees it
package drivers
