package proxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ByProcess returns an Attribute function that finds the dialling node by
// process group: groups returns the current process group id of each node
// (a node started through a wrapper script is the wrapper's group, so the
// wrapper's children count as the node). The dialler's socket is found in
// /proc/net/tcp and /proc/net/tcp6 by its two addresses, and its holder
// among the processes of those groups by /proc/PID/fd.
//
// The attributions of one Attribute function share their reads of /proc:
// a read begun after an attribution was asked for serves it, so that a
// burst of connections (every member dialling every other as a cluster
// starts) costs a read or two of the socket tables, not one each, and
// never more than one copy of them in memory. (Read by each connection
// on its own, the tables of 30 etcd members, read by the hundreds of
// connections waiting at once, held more than 1.5 GB.)
func ByProcess(groups func() map[string]int) func(remote, local *net.TCPAddr) (string, error) {
	t := &procTables{proc: "/proc"}
	return func(remote, local *net.TCPAddr) (string, error) {
		return t.attribute(groups(), remote, local)
	}
}

// procTables are the last reads of /proc that attributions share: the
// sockets, by their two ends, and the socket inodes that the nodes'
// processes hold, by process group. Each is read again for an attribution
// asked for after its last read began.
type procTables struct {
	proc string

	mu          sync.Mutex
	socketsRead time.Time
	sockets     map[socketEnds]uint64
	heldRead    time.Time
	held        map[uint64]int // socket inode: the process group holding it
	heldGroups  map[int]bool   // the groups whose processes were read
	// heldBy and heldPids are ByHostProcesses': the node holding each
	// socket inode, and the processes read.
	heldBy   map[uint64]string
	heldPids map[int]bool
}

// socketEnds is a socket's two ends: the dialler's (local in its table)
// and the dialled one's.
type socketEnds struct{ from, to netip.AddrPort }

func ends(from, to *net.TCPAddr) socketEnds {
	norm := func(a *net.TCPAddr) netip.AddrPort {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return socketEnds{norm(from), norm(to)}
}

func (t *procTables) attribute(groups map[string]int, remote, local *net.TCPAddr) (string, error) {
	if remote == nil || local == nil {
		return "", errors.New("no TCP addresses")
	}
	asked := time.Now()
	byGroup := make(map[int]string, len(groups))
	for node, pgid := range groups {
		byGroup[pgid] = node
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	inode, err := t.socketInode(asked, remote, local)
	if err != nil {
		return "", err
	}
	return t.holder(asked, inode, byGroup)
}

// socketInode finds the inode of the socket whose local address is from
// and whose remote address is to: the dialler's end of a connection. The
// tables are read again unless their last read began after asked.
func (t *procTables) socketInode(asked time.Time, from, to *net.TCPAddr) (uint64, error) {
	if t.sockets == nil || t.socketsRead.Before(asked) {
		t.socketsRead = time.Now()
		sockets, err := readSockets(t.proc)
		if err != nil {
			t.sockets = nil
			return 0, err
		}
		t.sockets = sockets
	}
	if inode, ok := t.sockets[ends(from, to)]; ok {
		return inode, nil
	}
	return 0, fmt.Errorf("no socket from %s to %s in %s/net/tcp{,6}", from, to, t.proc)
}

// readSockets reads every socket of /proc/net/tcp and /proc/net/tcp6, line
// by line.
func readSockets(proc string) (map[socketEnds]uint64, error) {
	out := map[socketEnds]uint64{}
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		f, err := os.Open(filepath.Join(proc, table))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // no IPv6
			}
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if s, ok := parseSocketLine(sc.Bytes()); ok && s.inode != 0 {
				out[ends(&s.local, &s.remote)] = s.inode
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// socketLine is what attribution needs of one line of /proc/net/tcp.
type socketLine struct {
	local, remote net.TCPAddr
	inode         uint64
}

// parseSocketLine parses a line of /proc/net/tcp or /proc/net/tcp6:
//
//	sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
//	0: 0100007F:1F90 0100007F:D3A2 01 00000000:00000000 00:00000000 00000000 1000 0 123456 ...
//
// Addresses are the IP's 32-bit words in hexadecimal, each in the host's
// byte order (little-endian here), and the port in hexadecimal. The
// header line, or any malformed line, is not ok.
func parseSocketLine(line []byte) (socketLine, bool) {
	f := strings.Fields(string(line))
	if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
		return socketLine{}, false
	}
	var s socketLine
	var ok bool
	if s.local, ok = parseHexAddr(f[1]); !ok {
		return socketLine{}, false
	}
	if s.remote, ok = parseHexAddr(f[2]); !ok {
		return socketLine{}, false
	}
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if err != nil {
		return socketLine{}, false
	}
	s.inode = inode
	return s, true
}

// parseHexAddr parses "0100007F:1F90" (127.0.0.1:8080) or its 32-digit
// IPv6 form.
func parseHexAddr(s string) (net.TCPAddr, bool) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok || (len(ipHex) != 8 && len(ipHex) != 32) || len(portHex) != 4 {
		return net.TCPAddr{}, false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil {
		return net.TCPAddr{}, false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return net.TCPAddr{}, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return net.TCPAddr{IP: ip, Port: int(port)}, true
}

// holder finds which node's process group holds socket inode: the group
// of a process with "socket:[inode]" among its open files. The nodes'
// processes are read again unless their last read began after asked and
// took in every group of byGroup.
func (t *procTables) holder(asked time.Time, inode uint64, byGroup map[int]string) (string, error) {
	fresh := t.held != nil && !t.heldRead.Before(asked)
	for g := range byGroup {
		fresh = fresh && t.heldGroups[g]
	}
	if !fresh {
		t.heldRead = time.Now()
		held, err := readHeld(t.proc, byGroup)
		if err != nil {
			t.held = nil
			return "", err
		}
		t.held, t.heldGroups = held, map[int]bool{}
		for g := range byGroup {
			t.heldGroups[g] = true
		}
	}
	if node, ok := byGroup[t.held[inode]]; ok {
		return node, nil
	}
	return "", fmt.Errorf("socket %d is held by no process of the nodes' groups", inode)
}

// readHeld reads the socket inodes that the processes of byGroup's groups
// hold open, with the group of each.
func readHeld(proc string, byGroup map[int]string) (map[uint64]int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	out := map[uint64]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pgid := processGroup(proc, pid)
		if _, ok := byGroup[pgid]; !ok {
			continue
		}
		dir := filepath.Join(proc, e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // ended, or not ours to read
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]") {
				continue
			}
			if inode, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64); err == nil {
				out[inode] = pgid
			}
		}
	}
	return out, nil
}

// processGroup is field 5 of /proc/PID/stat (-1 when it cannot be read).
func processGroup(proc string, pid int) int {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold anything; after it come
	// the state, the parent's pid, and the process group.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return -1
	}
	pgid, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return pgid
}

// ByHostProcesses is ByProcess for hosts that list their processes
// themselves (a cgroup's, a PID namespace's): hosts returns each node's
// processes, and the holder of the dialler's socket is looked for among
// those alone, by /proc/PID/fd, whatever their process groups (a daemon
// that called setsid is still its host's), without reading the rest of
// /proc. Reads are shared as ByProcess's are.
func ByHostProcesses(hosts func() map[string][]int) func(remote, local *net.TCPAddr) (string, error) {
	t := &procTables{proc: "/proc"}
	return func(remote, local *net.TCPAddr) (string, error) {
		if remote == nil || local == nil {
			return "", errors.New("no TCP addresses")
		}
		asked := time.Now()
		byPid := map[int]string{}
		for node, pids := range hosts() {
			for _, pid := range pids {
				byPid[pid] = node
			}
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		inode, err := t.socketInode(asked, remote, local)
		if err != nil {
			return "", err
		}
		fresh := t.heldBy != nil && !t.heldRead.Before(asked)
		for pid := range byPid {
			fresh = fresh && t.heldPids[pid]
		}
		if !fresh {
			t.heldRead = time.Now()
			t.heldBy, t.heldPids = map[uint64]string{}, map[int]bool{}
			for pid, node := range byPid {
				t.heldPids[pid] = true
				for _, inode := range socketsOf(t.proc, pid) {
					t.heldBy[inode] = node
				}
			}
		}
		if node, ok := t.heldBy[inode]; ok {
			return node, nil
		}
		return "", fmt.Errorf("socket %d is held by no process of the nodes' hosts", inode)
	}
}

// socketsOf are the socket inodes a process holds open.
func socketsOf(proc string, pid int) []uint64 {
	dir := filepath.Join(proc, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil // ended, or not ours to read
	}
	var out []uint64
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") || !strings.HasSuffix(link, "]") {
			continue
		}
		if inode, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64); err == nil {
			out = append(out, inode)
		}
	}
	return out
}
