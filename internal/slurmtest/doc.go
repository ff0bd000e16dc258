// Package slurmtest starts a Slurm cluster of one machine for a test:
// munged with a key and a socket of its own, slurmctld and slurmd with a
// slurm.conf of their own, every state, spool, log and pid file in a
// folder of the test's, all of it stopped and removed when the test ends,
// whatever happened.
//
// slurmctld and slurmd listen on every address of their network
// namespace (Slurm 22.05 binds no other way), so they get one of their
// own, with nothing in it but loopback: SlurmctldHost and NodeName are
// this machine's host name at 127.0.0.1, and nothing they open is
// reachable from beyond the namespace. Commands (sbatch, squeue,
// scontrol, a script that calls them) run inside it through
// Cluster.Command. munged's socket is a file, reached from any namespace.
//
// Every process the cluster starts, and every process Cluster.Command
// starts, carries an environment variable of the cluster's; slurmstepd,
// which outlives slurmd on purpose, and jobs' processes inherit it. At
// the end the jobs are cancelled, slurmd, slurmctld and munged are
// stopped by pid, and any process that still carries the variable is
// killed by pid, reported as a test error: no process is found or
// killed by name.
//
// A test that needs the cluster is skipped, with the Debian package to
// install, when slurmctld, slurmd, munged or sbatch is missing
// (internal/needs), and when it is not run as root (slurmd starts jobs
// as their user, and the network namespace is root's to make).
package slurmtest
