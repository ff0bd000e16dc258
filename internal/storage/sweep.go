package storage

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Mounts are the mount points of the layer's mounts (fuse.coup) at or
// under dir, as /proc/self/mountinfo lists them, deepest first.
func Mounts(dir string) ([]string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) || fields[sep+1] != "fuse."+FSName {
			continue
		}
		mp := unescape(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
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

// Sweep unmounts, lazily, every mount of the layer left at or under dir
// by a process that could not unmount it (one killed with SIGKILL: its
// mounts answer ENOTCONN), and returns their mount points; mounts that
// another process still serves are left alone.
func Sweep(dir string) ([]string, error) {
	mps, err := Mounts(dir)
	if err != nil {
		return nil, err
	}
	var done []string
	var first error
	for _, mp := range mps {
		// A mount whose server is gone answers ENOTCONN (statfs always
		// reaches the server; a stat may be answered from the kernel's
		// cache); one another run still serves is left alone.
		var st syscall.Statfs_t
		if err := syscall.Statfs(mp, &st); !errors.Is(err, syscall.ENOTCONN) && !errors.Is(err, syscall.ECONNABORTED) {
			continue
		}
		if err := detach(mp); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		done = append(done, mp)
	}
	return done, first
}
