package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/servers"
	"github.com/coupharness/coup/verdict"
)

const adapterUsage = `usage: coup adapter etcd|zookeeper [--reads MODE] [--lock-ttl D] [--timeout D]

Runs one of coup's built-in clients of real servers as a client process: it
speaks coup's client protocol on stdin and stdout (docs/servers.md) and the
servers' own protocol to the members, and logs on stderr. coup run starts
one for every workload client of a scenario that sets
[server] client_processes = true, so that a pause fault can stop a client;
run by hand, it waits for the init message on stdin.

flags:
`

func adapterCmd(args []string) int {
	fs := newFlags("adapter")
	reads := fs.String("reads", "", "how the client reads (etcd: linearizable or serializable; zookeeper: plain or sync)")
	ttl := fs.Duration("lock-ttl", 0, "the lease (etcd) or session timeout (zookeeper) under which a lock is held")
	timeout := fs.Duration("timeout", 10*time.Second, "how long an operation may take before its outcome is unknown")
	pos, code, ok := parseArgs(fs, adapterUsage, args)
	if !ok {
		return code
	}
	known := []string{scenario.ClientEtcd, scenario.ClientZooKeeper}
	switch {
	case len(pos) == 0:
		return usageError(fs, adapterUsage, "name the client: etcd or zookeeper")
	case len(pos) > 1:
		return usageError(fs, adapterUsage, "one client at a time, not %q", pos)
	case pos[0] != scenario.ClientEtcd && pos[0] != scenario.ClientZooKeeper:
		return usageError(fs, adapterUsage, "unknown client %q%s (known: etcd, zookeeper)", pos[0], scenario.DidYouMean(pos[0], known))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := servers.ClientOptions{Reads: *reads, LockTTL: *ttl, Timeout: *timeout}
	if err := servers.ServeClient(ctx, pos[0], opts, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "coup adapter: %v\n", err)
		return verdict.ExitUnexpected
	}
	return 0
}
