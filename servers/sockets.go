package servers

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest path a Unix socket may have (sun_path's
// 108 bytes, less its terminating zero).
const maxSocketPath = 107

// socketRoom is what a host's socket folder leaves for the socket's own
// name: PostgreSQL's ".s.PGSQL.65535.lock" and more.
const socketRoom = 40

// makeSockets makes each node's socket folder (ServerNode.Sockets): a
// folder of the run's own under the machine's temporary folder
// (coup-sockets-XXXX), a short folder a node inside it, the host's user's
// when the hosts run as another user. A folder too long for a socket's
// path (a long TMPDIR) fails the start at once, saying so.
func (r *run) makeSockets() error {
	root, err := os.MkdirTemp("", "coup-sockets-")
	if err != nil {
		return fmt.Errorf("a folder for the hosts' Unix sockets: %w", err)
	}
	r.sockets = root
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	for _, n := range r.layout.nodes {
		n.Sockets = filepath.Join(root, n.ID)
		if len(n.Sockets)+socketRoom > maxSocketPath {
			return fmt.Errorf("%s's socket folder %s is too long for a Unix socket's path (%d bytes of at most %d, with %d for the socket's name): set TMPDIR to a shorter folder",
				n.ID, n.Sockets, len(n.Sockets), maxSocketPath, socketRoom)
		}
		if err := os.Mkdir(n.Sockets, 0o755); err != nil {
			return err
		}
		if c := r.iso.cred; c != nil {
			if err := os.Lchown(n.Sockets, int(c.Uid), int(c.Gid)); err != nil {
				return fmt.Errorf("give %s's socket folder to user = %q: %w", n.ID, r.sv.User, err)
			}
		}
	}
	return nil
}

// removeSockets removes the socket folders, whatever is left in them.
func (r *run) removeSockets() {
	if r.sockets != "" {
		if err := os.RemoveAll(r.sockets); err != nil {
			r.logf("the hosts' socket folders: %v", err)
		}
	}
}
