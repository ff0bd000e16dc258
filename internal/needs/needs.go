// Package needs is for tests that need a program or file from a Debian
// package: the test runs where the package is installed, and where it is
// not, the test is skipped and named, with the command that installs
// what is missing, in one line at the end of `go test ./...`.
//
// `go test` shows nothing of a package whose tests pass, skips included,
// so a skip alone would be silent. A skipped test appends a line to a
// file named after the go command's process; the first such test starts
// a small watcher (this test binary again, with COUP_NEEDS_WATCH set)
// whose output is the go command's own standard output. When the go
// command has exited, after its last line, the watcher prints one line
// from the file, removes it, and exits. A skip also keeps its package's
// result out of the test cache (it reads a file of the module's, made
// for the purpose, too new to cache; the watcher removes it), so that
// every run of `go test` either runs the test or names it. A test binary run by hand, or
// under `go test -json`, prints the line at its own end instead, or not
// at all (the skip message still names the package).
package needs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Program returns the path of program, or skips t when it is not
// installed, naming the Debian package that installs it.
func Program(t testing.TB, program, debian string) string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	Skip(t, debian, program+" is not installed")
	return ""
}

// File skips t unless path exists, naming the Debian package that
// installs it.
func File(t testing.TB, path, debian string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	Skip(t, debian, path+" is not installed")
}

// Python returns a python3 that imports module, or skips t, naming the
// Debian package that installs the module.
func Python(t testing.TB, module, debian string) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import "+module).Run() == nil {
			return p
		}
	}
	Skip(t, debian, "python3's module "+module+" is not installed")
	return ""
}

// Skip records that t needs the Debian package debian, and skips it.
func Skip(t testing.TB, debian, why string) {
	t.Helper()
	record(t.Name(), debian)
	t.Skipf("%s (apt-get install %s)", why, debian)
}

// envWatch names the file a watcher reads; envPid the go command's pid.
const (
	envWatch  = "COUP_NEEDS_WATCH"
	envPid    = "COUP_NEEDS_PID"
	envMarker = "COUP_NEEDS_MARKER"
)

func init() {
	if file := os.Getenv(envWatch); file != "" {
		pid, _ := strconv.Atoi(os.Getenv(envPid))
		watch(file, os.Getenv(envMarker), pid)
		os.Exit(0)
	}
}

// record appends the skipped test to the go command's file, and starts
// the watcher when this is the first line of it.
func record(test, debian string) {
	goPid, ok := goCommand()
	if !ok {
		return
	}
	file := filepath.Join(os.TempDir(), fmt.Sprintf("coup-needs-%d", goPid))
	first := false
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		first = true
	} else if f, err = os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return
	}
	fmt.Fprintf(f, "%s\t%s\n", debian, test)
	f.Close()
	marker := uncached(goPid)
	if first {
		startWatcher(file, marker, goPid)
	}
}

// uncached keeps this package's result out of go's test cache: go does
// not cache a run that read a file of its module changed less than two
// seconds before. The file is made in the module's root, and the
// watcher removes it. It returns the file's path, or "".
func uncached(goPid int) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
	marker := filepath.Join(dir, fmt.Sprintf(".coup-needs-%d", goPid))
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
		f.Close()
	}
	if f, err := os.Open(marker); err == nil {
		f.Close()
	}
	return marker
}

// goCommand returns the pid of the go command that runs this test
// binary, when it is one and does not speak JSON (a line of ours would
// break `go test -json`'s stream).
func goCommand() (int, bool) {
	pid := os.Getppid()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || filepath.Base(exe) != "go" {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, false
	}
	args := strings.Split(string(cmdline), "\x00")
	if len(args) < 2 || args[1] != "test" {
		return 0, false
	}
	for _, a := range args {
		if a == "-json" || a == "--json" || a == "-v" || a == "--v" {
			// -v shows every skip message already.
			return 0, false
		}
	}
	return pid, true
}

// startWatcher starts this binary again as the watcher, writing to the
// go command's standard output.
func startWatcher(file, marker string, goPid int) {
	out, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", goPid), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer out.Close()
	self, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envWatch+"="+file, envMarker+"="+marker, envPid+"="+strconv.Itoa(goPid))
	cmd.Stdout = out
	if cmd.Start() == nil {
		cmd.Process.Release()
	}
}

// watch waits for the go command to exit (at most a day), then prints
// the file's line and removes it and the marker.
func watch(file, marker string, goPid int) {
	start := startTime(goPid)
	for deadline := time.Now().Add(24 * time.Hour); time.Now().Before(deadline); {
		if s := startTime(goPid); s == "" || s != start {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, err := os.Open(file)
	if err != nil {
		return
	}
	line := Line(f)
	f.Close()
	os.Remove(file)
	if marker != "" {
		os.Remove(marker)
	}
	if line != "" {
		fmt.Println(line)
	}
}

// startTime is the process's start time (field 22 of /proc/PID/stat),
// which tells a process from a later one given the same pid; "" once
// the process has gone.
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	fields := strings.Fields(s)
	// After the command's closing parenthesis, field 3 is the state and
	// field 22 the start time: the 20th from here.
	if len(fields) < 20 {
		return ""
	}
	if fields[0] == "Z" {
		return ""
	}
	return fields[19]
}

// Line reads recorded skips ("DEBIAN\tTEST" lines) and says them in one
// line: how many tests each package would run, and the one command
// that installs them all. It returns "" for no skips.
func Line(r interface{ Read([]byte) (int, error) }) string {
	tests := map[string]map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		debian, test, ok := strings.Cut(sc.Text(), "\t")
		if !ok || debian == "" {
			continue
		}
		if tests[debian] == nil {
			tests[debian] = map[string]bool{}
		}
		tests[debian][test] = true
	}
	if len(tests) == 0 {
		return ""
	}
	var names []string
	all := 0
	for d, ts := range tests {
		names = append(names, d)
		all += len(ts)
	}
	sort.Strings(names)
	var counts []string
	for _, d := range names {
		counts = append(counts, fmt.Sprintf("%s %d", d, len(tests[d])))
	}
	plural := "s"
	if all == 1 {
		plural = ""
	}
	return fmt.Sprintf("coup: %d test%s skipped for want of Debian packages (%s); to run them: apt-get install %s",
		all, plural, strings.Join(counts, ", "), strings.Join(names, " "))
}
