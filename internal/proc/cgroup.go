package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// CgroupMount is where the unified hierarchy is mounted (the first
// mount of type cgroup2 in /proc/self/mountinfo).
func CgroupMount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options... - type source
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		if t := strings.Fields(post); len(t) > 0 && t[0] == "cgroup2" {
			if f := strings.Fields(pre); len(f) >= 5 {
				return unescapeMount(f[4]), nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var cgroupMount = sync.OnceValues(CgroupMount)

// cgroupFrozen reports whether a process is in a cgroup v2 group that
// the kernel says is frozen (cgroup.freeze): a frozen process's state in
// /proc is not "stopped".
func cgroupFrozen(pid int) bool {
	mount, err := cgroupMount()
	if err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && p != "/" {
			ev, err := os.ReadFile(filepath.Join(mount, p, "cgroup.events"))
			return err == nil && strings.Contains(string(ev), "frozen 1")
		}
	}
	return false
}
