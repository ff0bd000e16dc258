package servers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// reachable says why a user cannot reach a folder, or nil when it can:
// every folder above it must let the user through (search permission,
// x, for its owner, its group or others, whichever the user is to it).
// A host that runs as a user of its own (user = "postgres") needs its
// node's folder, and so the store's folders above it, reachable: a store
// under a folder of mode 0700 (mktemp -d's, a test's TempDir) is not, and
// the host's first process would fail with no more than "permission
// denied".
func reachable(dir string, c *syscall.Credential) error {
	if c == nil || c.Uid == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			mode := fi.Mode().Perm()
			var can bool
			switch {
			case st.Uid == c.Uid:
				can = mode&0o100 != 0
			case st.Gid == c.Gid || slices.Contains(c.Groups, st.Gid):
				can = mode&0o010 != 0
			default:
				can = mode&0o001 != 0
			}
			if !can {
				return fmt.Errorf("the folder %s (mode %04o, owner uid %d) does not let uid %d through to %s: make it searchable (chmod o+x %s), or store the run elsewhere (--store)", d, mode, st.Uid, c.Uid, abs, d)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
