package scenario

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

// Sidecar is another program of each node's host, beside the server:
// Redis's Sentinel, an agent, a proxy of the service's own. A node is a
// host: its server and its sidecars are started together (the server
// first, then each sidecar in order), and crashed, paused, resumed,
// restarted and replaced together. A sidecar's templates see the same
// node as the server's ({{.Addr.sentinel}} is the sidecar's port named
// "sentinel"), and what it says (its log lines, its answers to polls)
// adds to the node's belief: a sidecar may give the term or the leader
// that the server does not.
type Sidecar struct {
	// Name names the sidecar: its log is the node's name and its own
	// (n1.sentinel.log). Letters, digits, - and _.
	Name string `toml:"name"`
	// Command starts the sidecar: the program and its arguments, each a
	// template of ServerNode.
	Command []string `toml:"command"`
	// Ports name the TCP ports the sidecar listens on, on the host's
	// address, beside the server's: a name is the host's, unique among
	// the server's and every sidecar's.
	Ports []string `toml:"ports"`
	// Peer names those of its ports that other hosts dial: every
	// connection to one crosses coup's proxy, as the server's peer ports'.
	Peer []string `toml:"peer"`
	// Ready says when the sidecar is up, as the server's ready does: a
	// port of its own, a command or an HTTP GET (Probe; default: its
	// first port; a sidecar without ports and without a probe is up
	// once started).
	Ready Probe `toml:"ready"`
	// After names the process this sidecar waits for: it starts once
	// that one ("server", or a sidecar written before it) is ready
	// (default: the one written just before it). The sidecars start in
	// the order written, each once the one before is ready.
	After string `toml:"after"`
	// Roles map what its patterns' role groups read to a role, beside
	// the server's roles (a name may not mean two roles).
	Roles map[string]string `toml:"roles"`
	// Log patterns are matched against each line the sidecar writes.
	Log []Pattern `toml:"log"`
	// Poll asks the sidecar, in each of the host's poll rounds, what it
	// believes; its answers are read with the server's.
	Poll []Poll `toml:"poll"`
}

// The states the cluster may have to reach before a run's faults and
// workload begin (Server.ReadyState).
const (
	// ReadyPort: every process of every host accepts connections on its
	// ready port.
	ReadyPort = "port"
	// ReadyLeader: and a node is seen to lead.
	ReadyLeader = "leader"
	// ReadyFollowers: and every other node is seen to follow it.
	ReadyFollowers = "followers"
)

var sidecarName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// validateSidecars checks each sidecar and makes its ports, peer ports,
// polls and roles the host's: after it, Ports and Peer list the server's
// and then each sidecar's, and Poll the server's polls and then each
// sidecar's, so that the layout, the proxies and the poll rounds take
// them as the server's. The server's own ports and polls come first,
// counted in ownPorts and ownPolls.
func (s *Scenario) validateSidecars() error {
	sv := s.Server
	sv.ownPorts, sv.ownPolls = len(sv.Ports), len(sv.Poll)
	sv.pollAt = nil
	for i := range sv.Poll {
		sv.pollAt = append(sv.pollAt, fmt.Sprintf("server.poll[%d]", i))
	}
	if len(sv.Sidecars) == 0 {
		return nil
	}
	sv.Sidecars = slices.Clone(sv.Sidecars) // defaults filled in below are not the file's
	ports := slices.Clone(sv.Ports)
	peer := slices.Clone(sv.Peer)
	polls := slices.Clone(sv.Poll)
	roles := maps.Clone(sv.Roles)
	if roles == nil {
		roles = map[string]string{}
	}
	var names []string
	for k := range sv.Sidecars {
		sc := &sv.Sidecars[k]
		at := fmt.Sprintf("server.sidecar[%d]", k)
		switch {
		case sc.Name == "":
			return s.errorf(at+".name", "missing: name the sidecar (its log is n1.NAME.log), like \"sentinel\"")
		case !sidecarName.MatchString(sc.Name):
			return s.errorf(at+".name", "%q is not a name a log file can take: letters, digits, - and _", sc.Name)
		case slices.Contains(names, sc.Name):
			return s.errorf(at+".name", "%q names two sidecars", sc.Name)
		}
		names = append(names, sc.Name)
		if len(sc.Command) == 0 || sc.Command[0] == "" {
			return s.errorf(at+".command", "missing: give the program that starts the sidecar and its arguments")
		}
		for i, p := range sc.Ports {
			if !portName.MatchString(p) {
				return s.errorf(at+".ports", "%q (ports[%d]) is not a name a template can use: letters, digits and _", p, i)
			}
			if slices.Contains(ports, p) {
				return s.errorf(at+".ports", "%q is named twice on the host: a port's name is the host's, among the server's and every sidecar's", p)
			}
			ports = append(ports, p)
		}
		for _, p := range sc.Peer {
			if !slices.Contains(sc.Ports, p) {
				return s.errorf(at+".peer", "%q is not one of the sidecar's ports (%s)", p, strings.Join(sc.Ports, ", "))
			}
			peer = append(peer, p)
		}
		def := ""
		if len(sc.Ports) > 0 {
			def = sc.Ports[0]
		}
		if err := s.validateProbe(at+".ready", &sc.Ready, "the sidecar's ports", sc.Ports, def); err != nil {
			return err
		}
		switch {
		case sc.After == "":
		case sc.After == sc.Name:
			return s.errorf(at+".after", "%q is this sidecar: it waits for the server or a sidecar written before it", sc.After)
		case sc.After != "server" && !slices.Contains(names[:len(names)-1], sc.After):
			return s.errorf(at+".after", "%q is neither \"server\" nor a sidecar written before this one (%s): sidecars start in the order written", sc.After, strings.Join(append([]string{"server"}, names[:len(names)-1]...), ", "))
		}
		for _, raw := range sortedKeys(sc.Roles) {
			role := sc.Roles[raw]
			if !slices.Contains([]string{RoleLeader, RoleFollower, RoleNone}, role) {
				return s.errorf(keyPath(at+".roles", raw), "unknown role %q (known: leader, follower, none)", role)
			}
			if was, ok := roles[raw]; ok && was != role {
				return s.errorf(keyPath(at+".roles", raw), "%q reads as %s already: a name may not mean two roles on one host", raw, was)
			}
			roles[raw] = role
		}
		for j := range sc.Log {
			if err := s.validatePattern(fmt.Sprintf("%s.log[%d]", at, j), &sc.Log[j]); err != nil {
				return err
			}
		}
		for j := range sc.Poll {
			pat := fmt.Sprintf("%s.poll[%d]", at, j)
			if err := s.validatePollAt(pat, &sc.Poll[j]); err != nil {
				return err
			}
			polls = append(polls, sc.Poll[j])
			sv.pollAt = append(sv.pollAt, pat)
		}
	}
	sv.Ports, sv.Peer, sv.Poll = ports, peer, polls
	if len(roles) > 0 {
		sv.Roles = roles
	}
	return nil
}

// validateReady checks ready_state and ready_timeout.
func (s *Scenario) validateReady() error {
	sv := s.Server
	switch sv.ReadyState {
	case "":
		sv.ReadyState = ReadyPort
	case ReadyPort, ReadyLeader, ReadyFollowers:
	default:
		return s.errorf("server.ready_state", "%s", unknownMsg("ready state", sv.ReadyState, []string{ReadyPort, ReadyLeader, ReadyFollowers}))
	}
	return s.duration("server.ready_timeout", &sv.ReadyTimeout, sv.StartTimeout.D, true)
}

// sidecarLogs reports whether a sidecar reads its log lines.
func (sv *Server) sidecarLogs() bool {
	for _, sc := range sv.Sidecars {
		if len(sc.Log) > 0 {
			return true
		}
	}
	return false
}

// OwnPorts are the server's own ports, without its sidecars'.
func (sv *Server) OwnPorts() []string { return sv.Ports[:sv.ownPorts] }

// RenderedSidecar is a sidecar's command and probe, filled in for one
// node, and what it starts after ("" for the process before it).
type RenderedSidecar struct {
	Name    string
	Command []string
	Ready   RenderedProbe
	After   string
}

// parseSidecarTemplates parses each sidecar's command.
func (s *Scenario) parseSidecarTemplates(parse func(field, text string) (*template.Template, error)) error {
	sv := s.Server
	sv.tmpl.sidecars, sv.tmpl.sidecarReady = nil, nil
	for k, sc := range sv.Sidecars {
		pt, err := parseProbe(fmt.Sprintf("server.sidecar[%d].ready", k), &sv.Sidecars[k].Ready, parse)
		if err != nil {
			return err
		}
		sv.tmpl.sidecarReady = append(sv.tmpl.sidecarReady, pt)
		var ts []*template.Template
		for i, a := range sc.Command {
			tt, err := parse(fmt.Sprintf("server.sidecar[%d].command[%d]", k, i), a)
			if err != nil {
				return err
			}
			ts = append(ts, tt)
		}
		sv.tmpl.sidecars = append(sv.tmpl.sidecars, ts)
	}
	return nil
}

// encodeSidecars is the sidecars as TOML tables.
func encodeSidecars(list []Sidecar, patterns func([]Pattern) []map[string]any, polls func([]Poll) []map[string]any) []map[string]any {
	var out []map[string]any
	for _, sc := range list {
		m := map[string]any{"name": sc.Name, "command": sc.Command}
		if sc.Ports != nil {
			m["ports"] = sc.Ports
		}
		if sc.Peer != nil {
			m["peer"] = sc.Peer
		}
		if v := sc.Ready.encode(); v != nil {
			m["ready"] = v
		}
		if sc.After != "" {
			m["after"] = sc.After
		}
		if sc.Roles != nil {
			m["roles"] = sc.Roles
		}
		if sc.Log != nil {
			m["log"] = patterns(sc.Log)
		}
		if sc.Poll != nil {
			m["poll"] = polls(sc.Poll)
		}
		out = append(out, m)
	}
	return out
}
