package proxy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ByProcess returns an Attribute function that finds the dialling node by
// process group: groups returns the current process group id of each node
// (a node started through a wrapper script is the wrapper's group, so the
// wrapper's children count as the node). The dialler's socket is found in
// /proc/net/tcp and /proc/net/tcp6 by its two addresses, and its holder
// among the processes of those groups by /proc/PID/fd.
func ByProcess(groups func() map[string]int) func(remote, local *net.TCPAddr) (string, error) {
	return func(remote, local *net.TCPAddr) (string, error) {
		return attributeByProcess("/proc", groups(), remote, local)
	}
}

func attributeByProcess(proc string, groups map[string]int, remote, local *net.TCPAddr) (string, error) {
	if remote == nil || local == nil {
		return "", errors.New("no TCP addresses")
	}
	inode, err := socketInode(proc, remote, local)
	if err != nil {
		return "", err
	}
	byGroup := make(map[int]string, len(groups))
	for node, pgid := range groups {
		byGroup[pgid] = node
	}
	return holder(proc, inode, byGroup)
}

// socketInode finds the inode of the socket whose local address is from
// and whose remote address is to: the dialler's end of a connection.
func socketInode(proc string, from, to *net.TCPAddr) (uint64, error) {
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(proc, table))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // no IPv6
			}
			return 0, err
		}
		for line := range bytes.Lines(b) {
			s, ok := parseSocketLine(line)
			if ok && s.inode != 0 && s.local.Port == from.Port && s.remote.Port == to.Port &&
				s.local.IP.Equal(from.IP) && s.remote.IP.Equal(to.IP) {
				return s.inode, nil
			}
		}
	}
	return 0, fmt.Errorf("no socket from %s to %s in %s/net/tcp{,6}", from, to, proc)
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
// of a process with "socket:[inode]" among its open files.
func holder(proc string, inode uint64, byGroup map[int]string) (string, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return "", err
	}
	want := fmt.Sprintf("socket:[%d]", inode)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		node, ok := byGroup[processGroup(proc, pid)]
		if !ok {
			continue
		}
		dir := filepath.Join(proc, e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // ended, or not ours to read
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && link == want {
				return node, nil
			}
		}
	}
	return "", fmt.Errorf("socket %d is held by no process of the nodes' groups", inode)
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
