package servers

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/coupharness/coup/internal/proc"
	"github.com/coupharness/coup/scenario"
)

// A host on this machine holds its processes in a box: one per start of
// the host, made before its first process and gone after its last. How
// it holds them is the run's isolation, one file each:
//
//   - cgroup (hostcgroup.go), as root: a cgroup v2 group of the host's
//     own, which every process of the host starts in and whatever it
//     forks stays in, setsid and double-fork included; cgroup.freeze
//     stops them all at once, cgroup.kill ends them all.
//   - namespace (hostns.go), as a user who is not root: a PID namespace
//     (in a user namespace) whose first process is coup's init; every
//     process of the host is a process of the namespace, which the
//     init's kill(-1, …) reaches at once and whose end the init's is.
//   - group (hostgroup.go), where neither can be had: one process group,
//     led by the server; a process that leaves it (setsid) escapes the
//     host's pause, crash and end.
//
// A box's launch is the one place where a host's processes are put into
// what holds them: its cgroup or namespace, its user (the scenario's
// user) and its network namespace (boxSpec.netns, when the run gives the
// host one).
type box interface {
	// launch starts one process of the host in the box, its stdout and
	// stderr the given files.
	launch(ls launchSpec) (boxed, error)
	// freeze stops every process of the box at once, and thaw continues
	// them all.
	freeze() error
	thaw() error
	// kill ends every process of the box at once (a frozen one too).
	kill()
	// pids lists the processes of the box, as pids on this machine.
	pids() []int
	// close removes what holds the processes, once kill has ended them;
	// it says what it could not remove.
	close() error
}

// launchSpec is one process to launch.
type launchSpec struct {
	argv, env      []string
	dir            string
	stdout, stderr *os.File
	// leader is the first process of the box (the server).
	leader bool
}

// boxed is one process of a box.
type boxed interface {
	// Pid is its pid on this machine.
	Pid() int
	// Wait waits until it has ended and says how ("exit status 1").
	Wait() string
}

// The isolations, as the console, harness.log and results.json name
// them, and the scenario's isolation key asks for them.
const (
	isolationCgroup    = "cgroup"
	isolationNamespace = "namespace"
	isolationGroup     = "group"
)

// isolation is the run's choice of box, made once before any host
// starts.
type isolation struct {
	kind string
	// why says why the box is this one ("as root, with cgroup v2 at …").
	why string
	// cgroups is the folder the hosts' cgroups are made in (cgroup).
	cgroups string
	// cred is the user the hosts' processes run as (nil: coup's own).
	cred *syscall.Credential
}

// boxSpec is what a host asks of a box, at each of its starts.
type boxSpec struct {
	// host is the host's id (n1); inc counts its starts (a command's
	// boxes, host "n1-exec", count apart).
	host string
	inc  int
	// netns is the path of the host's network namespace (/run/netns/…),
	// which every process of the box starts in: the namespace's init
	// enters it before it starts any, a cgroup's or a group's processes
	// start through nsenter. "" is coup's own network. A namespace's init
	// can enter only a network namespace owned by a user namespace it
	// holds CAP_SYS_ADMIN over, which its own does not give (see
	// proc.NamespaceSpec: NewNet makes the network with the namespace).
	netns string
	// log is where the box's own words go (a namespace's init's).
	log *os.File
}

// chooseIsolation picks the isolation that the scenario's isolation key
// asks for, or refuses with the reason: "auto" takes the most this
// machine offers (a cgroup as root, a namespace as a user who is not
// root, else a process group); "host" takes a cgroup or a namespace and
// refuses where neither can be had; "cgroup", "namespace" and "group"
// take that one or refuse.
func chooseIsolation(sv *scenario.Server) (*isolation, error) {
	want := sv.Isolation
	iso := &isolation{}
	cgErr := fmt.Errorf("not root")
	if os.Geteuid() == 0 {
		iso.cgroups, cgErr = machineCgroups()
	}
	nsErr := error(nil)
	pickNS := func() bool {
		if nsErr = machineNamespaces(); nsErr == nil {
			iso.kind, iso.why = isolationNamespace, "a PID namespace of each host's own, in a user namespace"
			return true
		}
		return false
	}
	switch want {
	case "", scenario.IsolationAuto, scenario.IsolationHost:
		switch {
		case cgErr == nil:
			iso.kind, iso.why = isolationCgroup, "as root, a cgroup v2 group of each host's own, under "+iso.cgroups
		case pickNS():
		case want == scenario.IsolationHost:
			return nil, fmt.Errorf("isolation = \"host\" needs every process of a host held, and this machine gives coup neither a cgroup (%v) nor a namespace (%v)", cgErr, nsErr)
		default:
			iso.kind, iso.why = isolationGroup, fmt.Sprintf("a process group per host: neither a cgroup (%v) nor a namespace (%v) can be had here; a process that leaves its group (setsid) escapes its host", cgErr, nsErr)
		}
	case scenario.IsolationCgroup:
		if cgErr != nil {
			return nil, fmt.Errorf("isolation = \"cgroup\" cannot be had here: %v", cgErr)
		}
		iso.kind, iso.why = isolationCgroup, "as root, a cgroup v2 group of each host's own, under "+iso.cgroups
	case scenario.IsolationNamespace:
		if !pickNS() {
			return nil, fmt.Errorf("isolation = \"namespace\" cannot be had here: %v", nsErr)
		}
	case scenario.IsolationGroup:
		iso.kind, iso.why = isolationGroup, "a process group per host, as the scenario asks; a process that leaves its group (setsid) escapes its host"
	default:
		return nil, fmt.Errorf("unknown isolation %q", want)
	}
	if sv.User != "" {
		cred, err := userCredential(sv.User)
		if err != nil {
			return nil, err
		}
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("user = %q: the hosts' processes cannot run as another user, since coup does not run as root here", sv.User)
		}
		iso.cred = cred
		iso.why += "; its processes run as " + sv.User
	}
	return iso, nil
}

// What the machine offers is asked once: a campaign of runs asks it
// once.
var (
	machineCgroups    = sync.OnceValues(cgroupParent)
	machineNamespaces = sync.OnceValue(proc.Namespaces)
)

// newBox makes a box for one start of a host.
func (iso *isolation) newBox(bs boxSpec) (box, error) {
	switch iso.kind {
	case isolationCgroup:
		return newCgroupBox(iso, bs)
	case isolationNamespace:
		return newNamespaceBox(iso, bs)
	}
	return newGroupBox(iso, bs), nil
}
