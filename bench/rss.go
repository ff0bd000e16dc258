package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// RSSMain runs a command and writes its peak resident set size, in bytes,
// to a file: "coup bench-probe rss FILE ARGV...". The benchmark runs
// `coup check` through it because Linux counts, in the peak of a child
// that a process starts, the peak of that process before the exec; the
// benchmark itself holds a large history by then, this small process does
// not.
func RSSMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "bench-probe rss: want FILE ARGV...")
		return 2
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "bench-probe rss: %v\n", err)
		return 2
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // Linux gives kilobytes
	}
	if err := os.WriteFile(args[0], []byte(strconv.FormatInt(peak, 10)), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe rss: %v\n", err)
		return 2
	}
	return cmd.ProcessState.ExitCode()
}
