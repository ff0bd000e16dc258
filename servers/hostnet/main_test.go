package hostnet

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be a coup that makes a network and is
// killed before it can remove it (COUP_HOSTNET_CHILD).
func TestMain(m *testing.M) {
	if os.Getenv("COUP_HOSTNET_CHILD") == "1" {
		n, err := New(Config{Hosts: []string{"n1", "n2"}})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		for _, h := range n.Hosts() {
			fmt.Println(h.Namespace)
		}
		fmt.Println("up")
		time.Sleep(time.Minute) // killed before
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A coup killed with SIGKILL leaves its namespaces, named by its pid; the
// next network's start (Leftovers) removes them, and their interfaces.
func TestLeftoversOfAKilledCoupAreRemoved(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("coup's network cannot be made here: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "COUP_HOSTNET_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "up" {
		if strings.HasPrefix(sc.Text(), "error:") {
			t.Fatal(sc.Text())
		}
		names = append(names, sc.Text())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(names) != 2 {
		t.Fatalf("the killed coup made %v", names)
	}
	for _, name := range names {
		if _, err := os.Stat(NamespaceDir + "/" + name); err != nil {
			t.Fatalf("%s is not left after the kill (%v): the test shows nothing", name, err)
		}
	}
	removed, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !slices.Contains(removed, name) {
			t.Errorf("Leftovers removed %v, not %s", removed, name)
		}
		if _, err := os.Stat(NamespaceDir + "/" + name); err == nil {
			t.Errorf("%s is still there", name)
			_ = deleteNamespace(name)
		}
	}
}
