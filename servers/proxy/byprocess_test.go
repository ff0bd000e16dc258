package proxy

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// dialEnv, when set in a child's environment, makes the test binary a
// dialler (see TestMain): it dials the address, writes a line, and exits
// 0 if the line comes back, 3 if the connection is reset with nothing
// read, 1 otherwise.
const dialEnv = "COUP_PROXY_TEST_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		os.Exit(dialAndEcho(addr))
	}
	os.Exit(m.Run())
}

func dialAndEcho(addr string) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if strings.Contains(err.Error(), "reset") {
			return 3
		}
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	b := make([]byte, 5)
	n, err := io.ReadFull(c, b)
	switch {
	case err == nil && string(b) == "ping\n":
		return 0
	case n == 0 && err != nil && strings.Contains(err.Error(), "reset"):
		return 3
	}
	fmt.Fprintf(os.Stderr, "read %q: %v\n", b[:n], err)
	return 1
}

// procAddr writes an address as /proc/net/tcp does.
func procAddr(a net.TCPAddr) string {
	ip := a.IP.To4()
	if ip == nil {
		ip = a.IP.To16()
	}
	var b strings.Builder
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(ip[i:]))
	}
	return fmt.Sprintf("%s:%04X", b.String(), a.Port)
}

func TestParseSocketLine(t *testing.T) {
	for _, c := range []struct {
		line          string
		local, remote string
		inode         uint64
		ok            bool
	}{
		{"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", "", "", 0, false},
		{"   0: " + procAddr(net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}) + " " +
			procAddr(net.TCPAddr{IP: net.IPv4(127, 0, 0, 5), Port: 54321}) +
			" 01 00000000:00000000 00:00000000 00000000  1000        0 123456 1 0000000000000000 20 4 30 10 -1",
			"127.0.0.1:8080", "127.0.0.5:54321", 123456, true},
		{"   1: " + procAddr(net.TCPAddr{IP: net.IPv6loopback, Port: 2380}) + " " +
			procAddr(net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 443}) +
			" 01 00000000:00000000 00:00000000 00000000  1000        0 99 1",
			"[::1]:2380", "127.0.0.1:443", 99, true},
		{"   2: 0100007F:1F90 0100007F:XYZW 01 00000000:00000000 00:00000000 00000000 1000 0 7", "", "", 0, false},
		{"   3: 0100007F:1F90 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 1000 0 -7", "", "", 0, false},
		{"   4: 0100007F 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 1000 0 7", "", "", 0, false},
	} {
		s, ok := parseSocketLine([]byte(c.line))
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.line, ok, c.ok)
			continue
		}
		if ok && (s.local.String() != c.local || s.remote.String() != c.remote || s.inode != c.inode) {
			t.Errorf("%q: %s %s %d, want %s %s %d", c.line, &s.local, &s.remote, s.inode, c.local, c.remote, c.inode)
		}
	}
}

func FuzzParseSocketLine(f *testing.F) {
	f.Add("   0: 0100007F:1F90 0500007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 123456 1")
	f.Add("   1: 00000000000000000000000001000000:094C 0000000000000000FFFF00000100007F:01BB 01 0:0 0:0 0 1000 0 99")
	f.Fuzz(func(t *testing.T, line string) {
		s, ok := parseSocketLine([]byte(line))
		if !ok {
			return
		}
		// What parses writes back as it was read.
		for _, a := range []net.TCPAddr{s.local, s.remote} {
			again, ok := parseHexAddr(procAddr(a))
			if !ok || !again.IP.Equal(a.IP) || again.Port != a.Port {
				t.Errorf("%s does not survive writing back: %v %v", &a, &again, ok)
			}
		}
	})
}

// dialFromChild starts the test binary as a dialler of addr, through a
// shell in a process group of its own (so the dialler is the group's
// member, not its leader), and returns the child and its group.
func dialFromChild(t *testing.T, addr string, registered func(pgid int)) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `"$0"; exit $?`, os.Args[0])
	cmd.Env = append(os.Environ(), dialEnv+"="+addr)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	registered(-1)
	if err := cmd.Start(); err != nil {
		t.Skip("no /bin/sh:", err)
	}
	registered(cmd.Process.Pid)
	return cmd
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// A dialler in a node's process group is that node; one outside every
// node's group is not attributed, its connection reset and counted, and
// nothing reaches the target.
func TestByProcess(t *testing.T) {
	var mu sync.Mutex
	groups := map[string]int{}
	pol, ev := newPolicy(), newEvents()
	p, tg := start(t, pol, ev, func(c *Config) {
		c.From = ""
		c.Attribute = ByProcess(func() map[string]int {
			mu.Lock()
			defer mu.Unlock()
			return groups
		})
		c.AttributeRetry = 300 * time.Millisecond
	})
	echoed := make(chan error, 1)
	go func() {
		c, ok := <-tg.conns
		if !ok {
			echoed <- fmt.Errorf("no connection")
			return
		}
		defer c.Close()
		b := make([]byte, 5)
		if _, err := io.ReadFull(c, b); err != nil {
			echoed <- err
			return
		}
		_, err := c.Write(b)
		echoed <- err
	}()

	cmd := dialFromChild(t, p.Addr().String(), func(pgid int) {
		mu.Lock()
		defer mu.Unlock()
		groups = map[string]int{"n1": pgid, "n3": syscall.Getpgrp()}
	})
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("the dialler in n1's group exited %d, want 0 (its line echoed)", code)
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	if o := ev.await(t, EventOpen); o.Link != n1n2 {
		t.Errorf("open event %+v, want it from n1", o)
	}

	// Now n1 is another group: the same dialler is nobody's.
	cmd = dialFromChild(t, p.Addr().String(), func(pgid int) {
		mu.Lock()
		defer mu.Unlock()
		groups = map[string]int{"n1": syscall.Getpgrp()}
	})
	if code := exitCode(t, cmd); code != 3 {
		t.Fatalf("the dialler in no node's group exited %d, want 3 (reset, nothing read)", code)
	}
	u := ev.await(t, EventUnattributed)
	if !strings.Contains(u.Detail, "no process of the nodes' groups") {
		t.Errorf("unattributed event %+v", u)
	}
	p.Close()
	if s := p.Stats(); s.Unattributed != 1 || s.Opened != 1 || s.ToTarget != 5 {
		t.Errorf("stats %+v, want 1 opened (5 bytes through), 1 unattributed", s)
	}
}

// fakeProc writes a /proc of one socket, from → to with inode, held by
// process 100 of group 100.
func fakeProc(t *testing.T, dir string, from, to net.TCPAddr, inode int) {
	t.Helper()
	line := fmt.Sprintf("  sl  local_address rem_address   st\n   0: %s %s 01 00000000:00000000 00:00000000 00000000  1000 0 %d 1\n", procAddr(from), procAddr(to), inode)
	for _, err := range []error{
		os.MkdirAll(dir+"/net", 0o755), os.MkdirAll(dir+"/100/fd", 0o755),
		os.WriteFile(dir+"/net/tcp", []byte(line), 0o644),
		os.WriteFile(dir+"/100/stat", []byte("100 (a server) S 1 100 100 0"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(dir + "/100/fd/3")
	if err := os.Symlink(fmt.Sprintf("socket:[%d]", inode), dir+"/100/fd/3"); err != nil {
		t.Fatal(err)
	}
}

// Attributions share their reads of /proc, but never use one that began
// before they were asked for: a connection accepted since is always in
// the tables it is looked up in.
func TestByProcessSharesFreshReads(t *testing.T) {
	dir := t.TempDir()
	from := net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 40000}
	to := net.TCPAddr{IP: net.IPv4(127, 255, 0, 1), Port: 2380}
	fakeProc(t, dir, from, to, 4242)
	tables := &procTables{proc: dir}
	groups := map[int]string{100: "n2"}
	before := time.Now()
	got, err := tables.attribute(map[string]int{"n2": 100}, &from, &to)
	if err != nil || got != "n2" {
		t.Fatalf("attributed to %q (%v), want n2", got, err)
	}
	// The socket goes, and another takes its place under a new inode.
	fakeProc(t, dir, from, to, 4343)
	// Asked for before the last read began: that read serves it, unread.
	if inode, err := tables.socketInode(before, &from, &to); err != nil || inode != 4242 {
		t.Errorf("asked before the last read: inode %d (%v), want 4242 from that read", inode, err)
	}
	if node, err := tables.holder(before, 4242, groups); err != nil || node != "n2" {
		t.Errorf("asked before the last read: holder %q (%v), want n2 from that read", node, err)
	}
	// Asked for since: read again.
	now := time.Now()
	if inode, err := tables.socketInode(now, &from, &to); err != nil || inode != 4343 {
		t.Errorf("asked since the last read: inode %d (%v), want 4343, read again", inode, err)
	}
	if node, err := tables.holder(now, 4343, groups); err != nil || node != "n2" {
		t.Errorf("asked since the last read: holder %q (%v), want n2, read again", node, err)
	}
	// A group the last read did not take in is read, however fresh.
	groups[200] = "n3"
	os.MkdirAll(dir+"/200/fd", 0o755)
	os.WriteFile(dir+"/200/stat", []byte("200 (another) S 1 200 200 0"), 0o644)
	os.Symlink("socket:[5555]", dir+"/200/fd/4")
	if node, err := tables.holder(now, 5555, groups); err != nil || node != "n3" {
		t.Errorf("a new group: holder %q (%v), want n3", node, err)
	}
	if _, err := tables.holder(time.Now(), 9999, groups); err == nil || !strings.Contains(err.Error(), "held by no process") {
		t.Errorf("a socket nobody holds: %v", err)
	}
}

// ByHostProcesses finds a connection's dialler among the processes each
// host lists, whatever their groups: this process dials, and is named as
// its host's only while that host lists it.
func TestByHostProcesses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	remote, local := s.RemoteAddr().(*net.TCPAddr), s.LocalAddr().(*net.TCPAddr)
	hosts := map[string][]int{"n1": {os.Getppid()}, "n2": {os.Getpid()}}
	attribute := ByHostProcesses(func() map[string][]int { return hosts })
	if got, err := attribute(remote, local); err != nil || got != "n2" {
		t.Errorf("attributed to %q (%v), want n2, whose processes hold the dialler's socket", got, err)
	}
	hosts = map[string][]int{"n1": {os.Getppid()}}
	if got, err := ByHostProcesses(func() map[string][]int { return hosts })(remote, local); err == nil || !strings.Contains(err.Error(), "held by no process of the nodes' hosts") {
		t.Errorf("attributed to %q (%v), want no host", got, err)
	}
}
