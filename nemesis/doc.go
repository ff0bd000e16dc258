// Package nemesis is coup's fault model: what each fault does to a process
// or a link, and the schedule that says when.
//
// It is pure. Net decides the fate of each message (its delay, or that it
// is dropped) from the link's state and a seeded random source; Plan turns
// a scenario's faults into a timeline of actions. Neither reads a clock:
// the driver passes the time in. The real harness and the simulator drive
// the same code, so a seed means the same faults in both.
//
// Process faults act through the Cluster interface that each driver
// implements.
package nemesis
