package scenario

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/BurntSushi/toml"
)

// Server describes the nodes as real, unmodified servers that speak their
// own protocols (etcd, ZooKeeper, a TCP service of your own) instead of
// coup's node protocol. coup writes each one's command line and files from
// templates, puts a fault proxy on every directed link between them, and
// observes what each believes of the leader through its log lines and by
// polling it (docs/servers.md).
type Server struct {
	// Preset names a built-in description ("etcd", "zookeeper") whose keys
	// fill in every key this table leaves out.
	Preset string `toml:"preset"`
	// Command starts one node: the program and its arguments, each a
	// template (see ServerNode for what a template may use).
	Command []string `toml:"command"`
	// Program runs in place of the command's first element: a path
	// (relative to the scenario's folder) or a name found on PATH, so that
	// a preset runs another build of its server. It must exist when the
	// scenario is read, and a path is made absolute then.
	Program string `toml:"program"`
	// Version is the version of the preset's server that coup builds
	// from its source on first use and runs in place of the installed one
	// (nats: "2.15.2", github.com/nats-io/nats-server/v2; see
	// presetSources); "" runs the installed server.
	Version string `toml:"version"`
	// ExtraArgs are arguments (templates) added to the command: at its
	// end, or before ExtraArgsBefore.
	ExtraArgs []string `toml:"extra_args"`
	// ExtraArgsBefore is the element of the command (as written) before
	// which ExtraArgs go, for a program whose flags come before a last
	// argument: ZooKeeper's preset puts the JVM's before its main class
	// (default: ExtraArgs go at the end).
	ExtraArgsBefore string `toml:"extra_args_before"`
	// ElectionTimeout, HeartbeatEvery and Tick are the server's own
	// timeouts, which the templates write where the server reads them
	// ({{.ElectionTimeout.Ms}}): etcd's preset passes the first two as
	// --election-timeout and --heartbeat-interval, ZooKeeper's the tick as
	// tickTime. Each is a whole number of milliseconds; a key set that no
	// template uses is refused, since it would change nothing.
	ElectionTimeout Duration `toml:"election_timeout"`
	HeartbeatEvery  Duration `toml:"heartbeat_every"`
	Tick            Duration `toml:"tick"`
	// Files are written into each node's folder before each start: the
	// path (relative to the folder) and its text, a template.
	Files map[string]string `toml:"files"`
	// Env adds environment variables to each node's, as templates.
	Env map[string]string `toml:"env"`
	// Ports name the TCP ports each node listens on; coup picks a free
	// one for each name on the node's own loopback address.
	Ports []string `toml:"ports"`
	// Peer names the ports that the other nodes dial: every connection to
	// one crosses coup's proxy, attributed to an ordered pair of nodes.
	Peer []string `toml:"peer"`
	// Links says how the proxy learns which node dialled a connection:
	// "address" gives each node its own address for each peer (127.i.j.x),
	// for servers whose configuration lists every peer separately;
	// "process" gives each peer one address that every node uses, and
	// finds the dialler by its socket among the nodes' processes, for
	// servers whose members must agree on one address per member.
	Links string `toml:"links"`
	// Ready says when the server is up: a port that accepts connections
	// (its name; the default: the first of ports, one of the server's
	// own), a command that exits 0, or an HTTP GET that answers 2xx,
	// optionally matching its body (Probe).
	Ready Probe `toml:"ready"`
	// Isolation says what must hold every process of a host (the
	// server, its sidecars and everything they start): "auto" (the
	// default: the most this machine offers, a cgroup as root, a PID
	// namespace as a user who is not root, else a process group), "host"
	// (a cgroup or a namespace, and the run is refused where neither can
	// be had: for a server whose processes leave their process group,
	// as a daemon's setsid does), or one by name: "cgroup", "namespace",
	// "group" (docs/servers.md).
	Isolation string `toml:"isolation"`
	// User is the user every process of a host runs as ("postgres"),
	// its data folder made theirs; coup must run as root to switch.
	User string `toml:"user"`
	// Network says what carries the packets between hosts: "namespaces"
	// (each host a network namespace of its own with its own address,
	// 10.77.0.i, every packet through coup's network, on any protocol:
	// root only), "proxy" (each host a loopback address, every peer
	// connection through a TCP proxy per link: anyone), or "auto"
	// (namespaces where they can be had, the proxy elsewhere: the
	// default). Links then matters only to the proxy.
	Network string `toml:"network"`
	// StartTimeout is how long a node has to come up, at the start and
	// after a restart (default 30s).
	StartTimeout Duration `toml:"start_timeout"`
	// ReadyState is what coup must see before the run's faults and
	// workload begin, once every process of every host accepts
	// connections on its ready port: "port" (nothing more: the default),
	// "leader" (a node is seen to lead, by log or poll) or "followers" (a
	// node is seen to lead and every other to follow it). A fault due
	// earlier begins then, late; the run's zero stays the moment the
	// ports were ready, so that the history times the election.
	ReadyState string `toml:"ready_state"`
	// ReadyTimeout is how long the cluster has to reach ReadyState after
	// its ports are ready; past it the run fails, saying what was seen
	// (default: StartTimeout).
	ReadyTimeout Duration `toml:"ready_timeout"`
	// Sidecars are the other programs of each node's host, beside the
	// server ([[server.sidecar]]): a node is a host, whose processes
	// start, crash, pause, resume, restart and are replaced together.
	Sidecars []Sidecar `toml:"sidecar"`
	// Replace is a command run (a template) when a node is replaced with
	// its data wiped, after the old process is gone and before the new
	// one starts; the node then starts with State "existing". etcd's
	// preset removes the member and adds it again here.
	Replace []string `toml:"replace"`
	// Roles map what a pattern's role group reads to a role: "leader",
	// "follower" or "none" (default: each of those reads as itself).
	Roles map[string]string `toml:"roles"`
	// Log patterns are matched against each line a node writes (stdout
	// and stderr), the instant coup reads it.
	Log []Pattern `toml:"log"`
	// Poll asks each node, every PollEvery, what it believes; the
	// answers of one round are read together.
	Poll []Poll `toml:"poll"`
	// PollEvery is the polls' interval (default 100ms).
	PollEvery Duration `toml:"poll_every"`
	// PollTimeout bounds each question of a poll, unless the poll gives
	// its own timeout (default: PollEvery, at most 1s). An answer is read
	// when it comes, so the timeout bounds how late a polled belief can
	// be recorded; a question not answered within it counts as
	// unanswered (a paused or cut-off server).
	PollTimeout Duration `toml:"poll_timeout"`
	// LossReset is how long a stream stalled by a loss fault waits before
	// its connection is reset (default 1s).
	LossReset Duration `toml:"loss_reset"`
	// LockTTL is the lease under which the etcd client holds a lock (the
	// lock workload): it lapses this long after the holder last renewed
	// it (default 2s; etcd grants no less than about 1.5s).
	LockTTL Duration `toml:"lock_ttl"`
	// Client names the built-in client that drives a lin-kv workload
	// against the servers over their own protocol: "etcd" (its JSON
	// gateway on the client port) or "zookeeper" (its own protocol, on the
	// client port). Without one, a server scenario has no workload.
	Client string `toml:"client"`
	// Reads is how the client reads. etcd's: "linearizable" (the
	// default: the member asked checks with a quorum) or "serializable"
	// (served by the member from its own copy, which may be stale).
	// ZooKeeper's: "plain" (the default: the member's own copy, which
	// ZooKeeper promises only to be sequentially consistent) or "sync"
	// (the member first catches up with the leader).
	Reads string `toml:"reads"`
	// ClientProcesses runs each client of the built-in client as a
	// process of its own ("coup adapter etcd", one per workload client)
	// instead of inside coup, so that a fault can pause it: a pause whose
	// target is "holder" stops the client that holds the lock.
	ClientProcesses bool `toml:"client_processes"`
	// Disk says how each node's data folder ({{.Data}}) is kept: "fuse"
	// mounts it through coup's storage layer, which knows what each file
	// has synced (a power failure loses the rest, and disk faults act on
	// it); "direct" is a plain folder. Default: "fuse" when a fault needs
	// it (a power failure, a disk fault), else "direct".
	Disk string `toml:"disk"`
	// DiskNames says when the layer makes directory entries durable:
	// "journal" (the default: any sync makes every entry before it
	// durable, as ext4's and XFS's journals do) or "posix" (only the
	// directory's own fsync, as POSIX asks).
	DiskNames string `toml:"disk_names"`
	// Adapter is the program (and its arguments, templates of
	// AdapterClient) of a client adapter, for a service coup has no client
	// of its own for: coup starts one per workload client, and it speaks
	// coup's client protocol on its stdin and stdout (docs/servers.md) and
	// the service's own protocol to the members.
	Adapter []string `toml:"adapter"`

	tmpl serverTemplates
	// extraAt is where ExtraArgs go in the command: before its element
	// of that index, or at its end when 0 (nothing goes before the
	// program).
	extraAt int
	// timeoutsUsed are the keys of the timeouts the templates write.
	timeoutsUsed []string
	// ownPorts and ownPolls count the server's own ports and polls, at
	// the start of Ports and Poll, before its sidecars' (validateSidecars);
	// pollAt is each poll's key, for errors.
	ownPorts, ownPolls int
	pollAt             []string
}

// Pattern reads a belief from text: a regular expression whose named
// groups say what it found. "role" is the node's role (mapped through
// Roles), "term" its term (decimal, or hexadecimal after 0x), "leader"
// the name of the leader it follows, "self" the node's own name for
// itself (learnt, so that "leader" can name a node). A pattern without a
// role group takes Role; one with neither only teaches names.
type Pattern struct {
	// Match is the regular expression (Go's syntax).
	Match string `toml:"match"`
	// Role is the role when Match has no role group.
	Role string `toml:"role"`
	// InheritTerm lets a reading this pattern gives, when it has no term
	// of its own, take the last term a reading of the same node stated
	// (a server without terms beside a sidecar that has them). Its risk:
	// the term may be older than the belief, so that a new claim is
	// judged in the old claim's term (one-leader-per-term may then see
	// two claims in one term that never shared it). Off by default.
	InheritTerm bool `toml:"inherit_term"`
	// InheritLeader lets a follower's reading this pattern gives, when it
	// names no leader, follow the node other than its own that claims to
	// lead in the reading's term and still does (a server whose followers
	// name no leader, as ZooKeeper's srvr). Its risk: the leader is
	// another node's claim, not this node's own word, so a follower that
	// lost its leader reads as following it until its next reading; a
	// node never follows itself this way. Off by default: a follower that
	// names no leader believes in no known leader.
	InheritLeader bool `toml:"inherit_leader"`

	re *regexp.Regexp
}

// Poll is one question asked of each node at every poll: a TCP exchange,
// an HTTP GET, a file read or a command; what it answers is read through
// its patterns. Exactly one of TCP, HTTP, File and Command is set.
type Poll struct {
	// TCP is an address to connect to (a template); Send is written, and
	// the answer read until the server closes.
	TCP  string `toml:"tcp"`
	Send string `toml:"send"`
	// HTTP is a URL to GET (a template).
	HTTP string `toml:"http"`
	// File is a file to read (a template).
	File string `toml:"file"`
	// Command is a program to run (templates); its stdout is the answer.
	Command []string `toml:"command"`
	// Timeout bounds one question (default: the server's PollTimeout).
	Timeout Duration `toml:"timeout"`
	// Match reads the answer.
	Match []Pattern `toml:"match"`
	// Read names a built-in reader of the answer, in place of Match, for
	// an answer that patterns cannot read alone: "nats" reads NATS's /jsz
	// (and asks the same server's /raftz for the stream's term).
	Read string `toml:"read"`
}

// The roles a pattern may give.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	RoleNone     = "none"
)

// The built-in clients, and the etcd client's reads.
const (
	ClientEtcd        = "etcd"
	ClientZooKeeper   = "zookeeper"
	ClientRedis       = "redis"
	ClientNats        = "nats"
	ClientPostgres    = "postgres"
	ReadsLinearizable = "linearizable"
	ReadsSerializable = "serializable"
	ReadsPlain        = "plain"
	ReadsSync         = "sync"
)

// The isolations a scenario may ask of its hosts (Server.Isolation).
const (
	IsolationAuto      = "auto"
	IsolationHost      = "host"
	IsolationCgroup    = "cgroup"
	IsolationNamespace = "namespace"
	IsolationGroup     = "group"
)

// The ways the proxy attributes a connection.
const (
	LinksAddress = "address"
	LinksProcess = "process"
)

// What carries the packets between hosts (Server.Network).
const (
	NetworkAuto       = "auto"
	NetworkNamespaces = "namespaces"
	NetworkProxy      = "proxy"
)

// Server defaults.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultPollEvery    = 100 * time.Millisecond
	// MaxPollTimeoutDefault caps the default poll timeout (PollEvery):
	// a slower poll leaves its default at 1s.
	MaxPollTimeoutDefault = time.Second
	DefaultLossReset      = time.Second
	DefaultLockTTL        = 2 * time.Second
)

// ServerNode is what a template of Server may use, for one node.
type ServerNode struct {
	// ID is the node's name (n1); Index its place, from 1.
	ID    string
	Index int
	// Dir is the node's folder in the run's store; Data its data
	// directory inside it (wiped when the node is replaced).
	Dir, Data string
	// Sockets is a short folder of the node's own for its Unix sockets
	// (PostgreSQL's, Erlang's), under the machine's temporary folder, so
	// that a socket's path stays within the kernel's 107 bytes however
	// long the store's path is; made for the run, removed at its end.
	Sockets string
	// Host is the node's own loopback address; Port and Addr its ports
	// and host:port by name, where it listens.
	Host string
	Port map[string]int
	Addr map[string]string
	// Reach says where this node reaches each node (itself included),
	// through coup's proxy for the peer ports: every node's Reach names
	// the same address for a peer when Links is "process", and its own
	// when "address".
	Reach map[string]Endpoint
	// Nodes are every node's own endpoint (where it listens), in order:
	// for clients and for commands that talk to the cluster.
	Nodes []Endpoint
	// State is "new" at the first start and "existing" after a replace
	// (a member that joins a running cluster).
	State string
	// Scenario is the scenario file's folder, as an absolute path: a
	// server's program or files named relative to the scenario.
	Scenario string
	// ElectionTimeout, HeartbeatEvery and Tick are the server's own
	// timeouts, as the scenario gives them (0 when it does not).
	ElectionTimeout, HeartbeatEvery, Tick Span
	// Majority is the least number of nodes that is more than half of
	// them (2 of 3): a quorum, for servers that are told theirs.
	Majority int
}

// Span is a duration as a template writes it: {{.Tick.Ms}} is whole
// milliseconds (500), {{.Tick.S}} seconds (0.5), {{.Tick}} Go's form
// (500ms).
type Span time.Duration

// Ms is the span in whole milliseconds.
func (d Span) Ms() int64 { return time.Duration(d).Milliseconds() }

// S is the span in seconds.
func (d Span) S() float64 { return time.Duration(d).Seconds() }

func (d Span) String() string { return time.Duration(d).String() }

// AdapterClient is what the adapter's templates may use.
type AdapterClient struct {
	// Client is the workload client the process serves (c1).
	Client string
	// Dir is the run's folder in the store.
	Dir string
	// Scenario is the scenario file's folder, as an absolute path.
	Scenario string
}

// RenderAdapter fills in the adapter's command for a client.
func (sv *Server) RenderAdapter(c *AdapterClient) ([]string, error) {
	out := make([]string, len(sv.tmpl.adapter))
	for i, t := range sv.tmpl.adapter {
		var b strings.Builder
		if err := t.Execute(&b, c); err != nil {
			return nil, err
		}
		out[i] = b.String()
	}
	return out, nil
}

// ClientsAreProcesses reports whether the workload's clients run as
// processes of their own: an adapter's, or the built-in client's when
// ClientProcesses asks.
func (sv *Server) ClientsAreProcesses() bool {
	return len(sv.Adapter) > 0 || (sv.Client != "" && sv.ClientProcesses)
}

// Endpoint is a node's address and ports.
type Endpoint struct {
	ID    string
	Index int
	Host  string
	Port  map[string]int
	Addr  map[string]string
}

// serverTemplates are the parsed templates.
type serverTemplates struct {
	command, extraArgs, replace []*template.Template
	adapter                     []*template.Template
	files, env                  map[string]*template.Template
	polls                       []pollTemplates
	sidecars                    [][]*template.Template
	// ready and sidecarReady are the probes' templates.
	ready        probeTemplates
	sidecarReady []probeTemplates
}

type pollTemplates struct {
	tcp, http, file *template.Template
	command         []*template.Template
}

// Rendered is what a node's templates give.
type Rendered struct {
	Command, Replace []string
	Files, Env       map[string]string
	// Polls are the server's polls and then its sidecars', in the order
	// of Server.Poll.
	Polls []RenderedPoll
	// Sidecars are the sidecars' commands, in order.
	Sidecars []RenderedSidecar
	// Ready is the server's ready probe.
	Ready RenderedProbe
}

// RenderedPoll is a poll with its addresses filled in.
type RenderedPoll struct {
	TCP, HTTP, File string
	Command         []string
}

// Question says what a poll asks, for its evidence: "GET URL", "tcp
// ADDR", "file PATH" or the command line.
func (p RenderedPoll) Question() string {
	switch {
	case p.HTTP != "":
		return "GET " + p.HTTP
	case p.TCP != "":
		return "tcp " + p.TCP
	case p.File != "":
		return "file " + p.File
	}
	return strings.Join(p.Command, " ")
}

// Render fills in the node's templates.
func (sv *Server) Render(n *ServerNode) (*Rendered, error) {
	r := &Rendered{Files: map[string]string{}, Env: map[string]string{}}
	var err error
	if r.Command, err = execAll(sv.tmpl.command, n); err != nil {
		return nil, err
	}
	extra, err := execAll(sv.tmpl.extraArgs, n)
	if err != nil {
		return nil, err
	}
	if sv.Program != "" {
		r.Command[0] = sv.Program
	}
	at := len(r.Command)
	if sv.extraAt > 0 {
		at = sv.extraAt
	}
	r.Command = slices.Insert(r.Command, at, extra...)
	if r.Replace, err = execAll(sv.tmpl.replace, n); err != nil {
		return nil, err
	}
	for name, t := range sv.tmpl.files {
		if r.Files[name], err = execOne(t, n); err != nil {
			return nil, err
		}
	}
	for name, t := range sv.tmpl.env {
		if r.Env[name], err = execOne(t, n); err != nil {
			return nil, err
		}
	}
	for _, pt := range sv.tmpl.polls {
		var p RenderedPoll
		for _, f := range []struct {
			t   *template.Template
			out *string
		}{{pt.tcp, &p.TCP}, {pt.http, &p.HTTP}, {pt.file, &p.File}} {
			if f.t != nil {
				if *f.out, err = execOne(f.t, n); err != nil {
					return nil, err
				}
			}
		}
		if p.Command, err = execAll(pt.command, n); err != nil {
			return nil, err
		}
		r.Polls = append(r.Polls, p)
	}
	if r.Ready, err = sv.tmpl.ready.render(sv.Ready, n); err != nil {
		return nil, err
	}
	for k, ts := range sv.tmpl.sidecars {
		argv, err := execAll(ts, n)
		if err != nil {
			return nil, err
		}
		ready, err := sv.tmpl.sidecarReady[k].render(sv.Sidecars[k].Ready, n)
		if err != nil {
			return nil, err
		}
		r.Sidecars = append(r.Sidecars, RenderedSidecar{Name: sv.Sidecars[k].Name, Command: argv, Ready: ready, After: sv.Sidecars[k].After})
	}
	return r, nil
}

func execAll(ts []*template.Template, n *ServerNode) ([]string, error) {
	var out []string
	for _, t := range ts {
		s, err := execOne(t, n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func execOne(t *template.Template, n *ServerNode) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, n); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Regexp is the pattern's compiled expression (after validation).
func (p *Pattern) Regexp() *regexp.Regexp { return p.re }

// RoleOf maps what a role group read to a role.
func (sv *Server) RoleOf(read string) string {
	if r, ok := sv.Roles[read]; ok {
		return r
	}
	return read
}

// validateServer fills in the preset and the defaults, and checks every
// key, templates and patterns included, against a sample node.
func (s *Scenario) validateServer() error {
	sv := s.Server
	w := *sv
	s.written = &w
	if sv.Preset != "" {
		p, ok := presets[sv.Preset]
		if !ok {
			return s.errorf("server.preset", "%s", unknownMsg("preset", sv.Preset, presetNames()))
		}
		sv.fillFrom(p())
	}
	if s.Algorithm == "" {
		s.algorithmFromServer = true
		s.Algorithm = sv.Preset
		if s.Algorithm == "" {
			s.Algorithm = "server"
		}
	}
	if len(sv.Command) == 0 || sv.Command[0] == "" {
		return s.errorf("server.command", "missing: give the program that starts one server and its arguments, or a preset (%s)", strings.Join(presetNames(), ", "))
	}
	if err := s.validateAdaptations(); err != nil {
		return err
	}
	if err := s.validateVersion(); err != nil {
		return err
	}
	if len(sv.Ports) == 0 {
		return s.errorf("server.ports", "missing: name the ports each server listens on, like [\"client\", \"peer\"]")
	}
	for i, p := range sv.Ports {
		if !portName.MatchString(p) {
			return s.errorf("server.ports", "%q (ports[%d]) is not a name a template can use: letters, digits and _", p, i)
		}
		if slices.Contains(sv.Ports[:i], p) {
			return s.errorf("server.ports", "%q is named twice", p)
		}
	}
	for _, p := range sv.Peer {
		if !slices.Contains(sv.Ports, p) {
			return s.errorf("server.peer", "%q is not one of the ports (%s)", p, strings.Join(sv.Ports, ", "))
		}
	}
	switch sv.Links {
	case "":
		sv.Links = LinksAddress
	case LinksAddress, LinksProcess:
	default:
		return s.errorf("server.links", "unknown %q (known: address, process)", sv.Links)
	}
	switch sv.Network {
	case "":
		sv.Network = NetworkAuto
	case NetworkAuto, NetworkNamespaces, NetworkProxy:
	default:
		return s.errorf("server.network", "unknown %q (known: auto, namespaces, proxy)", sv.Network)
	}
	if err := s.validateProbe("server.ready", &sv.Ready, "the ports", sv.Ports, sv.Ports[0]); err != nil {
		return err
	}
	switch sv.Isolation {
	case "":
		sv.Isolation = IsolationAuto
	case IsolationAuto, IsolationHost, IsolationCgroup, IsolationNamespace, IsolationGroup:
	default:
		return s.errorf("server.isolation", "%s", unknownMsg("isolation", sv.Isolation, []string{IsolationAuto, IsolationHost, IsolationCgroup, IsolationNamespace, IsolationGroup}))
	}
	if sv.User != "" && (strings.ContainsAny(sv.User, " :/\x00") || strings.HasPrefix(sv.User, "-")) {
		return s.errorf("server.user", "%q is not a user's name", sv.User)
	}
	if sv.User != "" && sv.Isolation == IsolationNamespace {
		return s.errorf("server.user", "a host in a namespace runs as coup's own user: switching to %q needs root (isolation = \"cgroup\" or \"auto\")", sv.User)
	}
	if err := s.duration("server.start_timeout", &sv.StartTimeout, DefaultStartTimeout, true); err != nil {
		return err
	}
	if err := s.duration("server.poll_every", &sv.PollEvery, DefaultPollEvery, true); err != nil {
		return err
	}
	if err := s.duration("server.poll_timeout", &sv.PollTimeout, min(sv.PollEvery.D, MaxPollTimeoutDefault), true); err != nil {
		return err
	}
	if sv.PollTimeout.Set && len(sv.Poll) == 0 {
		return s.errorf("server.poll_timeout", "a timeout for polls, and the server has none ([[server.poll]])")
	}
	if err := s.duration("server.loss_reset", &sv.LossReset, DefaultLossReset, true); err != nil {
		return err
	}
	if err := s.duration("server.lock_ttl", &sv.LockTTL, DefaultLockTTL, true); err != nil {
		return err
	}
	for raw, role := range sv.Roles {
		if !slices.Contains([]string{RoleLeader, RoleFollower, RoleNone}, role) {
			return s.errorf(keyPath("server.roles", raw), "unknown role %q (known: leader, follower, none)", role)
		}
	}
	for i := range sv.Log {
		if err := s.validatePattern(fmt.Sprintf("server.log[%d]", i), &sv.Log[i]); err != nil {
			return err
		}
	}
	for i := range sv.Poll {
		if err := s.validatePollAt(fmt.Sprintf("server.poll[%d]", i), &sv.Poll[i]); err != nil {
			return err
		}
	}
	if err := s.validateSidecars(); err != nil {
		return err
	}
	if err := s.validateReady(); err != nil {
		return err
	}
	if len(sv.Peer) == 0 && s.Nodes > 1 && sv.Network != NetworkNamespaces {
		// coup's network carries every packet between hosts, whatever the
		// port: only the proxy must know where to listen.
		return s.errorf("server.peer", "missing: name the ports peers dial, so that coup can put its proxy on every link (or network = \"namespaces\", whose packets cross coup's network whatever their port)")
	}
	if len(sv.Log) == 0 && len(sv.Poll) == 0 && !sv.sidecarLogs() {
		return s.errorf("server", "no way to see the leader: give log patterns ([[server.log]]) or polls ([[server.poll]])")
	}
	if err := s.parseTemplates(); err != nil {
		return err
	}
	if err := s.checkTimeoutsUsed(); err != nil {
		return err
	}
	reads := map[string][]string{ClientEtcd: {ReadsLinearizable, ReadsSerializable}, ClientZooKeeper: {ReadsPlain, ReadsSync}, ClientRedis: nil, ClientNats: nil, ClientPostgres: nil}
	known, ok := reads[sv.Client]
	switch {
	case sv.Client == "" && sv.Reads != "":
		return s.errorf("server.reads", "only for a client (client = \"etcd\" or \"zookeeper\")")
	case sv.Client == "":
	case !ok:
		return s.errorf("server.client", "unknown client %q (known: etcd, nats, postgres, redis, zookeeper)", sv.Client)
	case len(known) == 0 && sv.Reads != "":
		return s.errorf("server.reads", "the %s client has one way to read: it takes no reads", sv.Client)
	case len(known) == 0:
	case sv.Reads == "":
		sv.Reads = known[0]
	case !slices.Contains(known, sv.Reads):
		return s.errorf("server.reads", "the %s client reads %s, not %q", sv.Client, strings.Join(known, " or "), sv.Reads)
	}
	if err := s.validatePostgresClient(); err != nil {
		return err
	}
	if sv.Disk != "" && sv.Disk != DiskFUSE && sv.Disk != DiskDirect {
		return s.errorf("server.disk", "unknown disk %q (known: %s, %s)%s", sv.Disk, DiskFUSE, DiskDirect, DidYouMean(sv.Disk, []string{DiskFUSE, DiskDirect}))
	}
	switch {
	case sv.DiskNames != "" && sv.DiskNames != DiskNamesJournal && sv.DiskNames != DiskNamesPOSIX:
		return s.errorf("server.disk_names", "unknown model %q (known: %s, %s)", sv.DiskNames, DiskNamesJournal, DiskNamesPOSIX)
	case sv.DiskNames != "" && sv.Disk == DiskDirect:
		return s.errorf("server.disk_names", "a model of coup's storage layer, and disk = %q keeps the data folders plain", DiskDirect)
	}
	switch {
	case len(sv.Adapter) > 0 && sv.Client != "":
		return s.errorf("server.adapter", "the built-in %s client already drives the workload: an adapter is for a service coup has no client of its own for", sv.Client)
	case sv.ClientProcesses && sv.Client == "":
		return s.errorf("server.client_processes", "only for a built-in client (client = \"etcd\" or \"zookeeper\"); an adapter's clients are processes anyway")
	case sv.ClientProcesses && (sv.Client == ClientRedis || sv.Client == ClientNats || sv.Client == ClientPostgres):
		return s.errorf("server.client_processes", "the %s client runs inside coup only (client = \"etcd\" or \"zookeeper\" run as processes)", sv.Client)
	}
	switch s.Workload.Kind {
	case "", WorkloadNone:
		s.Workload.Kind = WorkloadNone
	case WorkloadMutex, WorkloadLinKV, WorkloadSet:
		if sv.Client == "" && len(sv.Adapter) == 0 {
			return s.errorf("workload.kind", "a %s workload against real servers needs their client ([server] client = \"etcd\", \"redis\" or \"zookeeper\") or a client adapter ([server] adapter)", s.Workload.Kind)
		}
		if s.Workload.Kind == WorkloadMutex && sv.Client == ClientPostgres {
			return s.errorf("workload.kind", "the postgres client carries lin-kv (SELECT, an upsert, and a compare-and-set in one UPDATE) and set workloads (an INSERT per add, a SELECT of the set), not locks")
		}
		if s.Workload.Kind == WorkloadMutex && sv.Client == ClientRedis {
			return s.errorf("workload.kind", "the redis client carries lin-kv (GET, SET, and a compare-and-set in a script) and set workloads (SADD, SMEMBERS), not locks")
		}
		if s.Workload.Kind != WorkloadSet && sv.Client == ClientNats {
			return s.errorf("workload.kind", "the nats client carries the set workload (a publish per add, acknowledged by JetStream, and the stream read back), not %s", s.Workload.Kind)
		}
	default:
		return s.errorf("workload.kind", "real servers take a lin-kv, set or mutex workload through their client, or none (%q is not served)", s.Workload.Kind)
	}
	if s.Elects == "" {
		s.Elects = "any"
	}
	if rule, ok := presetRules[sv.Preset]; ok {
		return rule(s)
	}
	return nil
}

var portName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (s *Scenario) validatePattern(at string, p *Pattern) error {
	re, err := regexp.Compile(p.Match)
	if err != nil {
		return s.errorf(at+".match", "not a regular expression: %v", err)
	}
	p.re = re
	known := []string{"role", "term", "leader", "self"}
	hasRole := false
	for _, g := range re.SubexpNames()[1:] {
		if g == "" {
			continue
		}
		if !slices.Contains(known, g) {
			return s.errorf(at+".match", "group %q means nothing here (known: %s)", g, strings.Join(known, ", "))
		}
		hasRole = hasRole || g == "role"
	}
	if p.Role != "" {
		if hasRole {
			return s.errorf(at+".role", "the pattern has a role group already")
		}
		if !slices.Contains([]string{RoleLeader, RoleFollower, RoleNone}, p.Role) {
			return s.errorf(at+".role", "unknown role %q (known: leader, follower, none)", p.Role)
		}
	}
	return nil
}

// validatePollAt checks the poll p, whose key is at.
func (s *Scenario) validatePollAt(at string, p *Poll) error {
	set := 0
	for _, b := range []bool{p.TCP != "", p.HTTP != "", p.File != "", len(p.Command) > 0} {
		if b {
			set++
		}
	}
	if set != 1 {
		return s.errorf(at, "give exactly one of tcp, http, file and command (%d given)", set)
	}
	if p.Send != "" && p.TCP == "" {
		return s.errorf(at+".send", "only for a tcp poll")
	}
	if err := s.duration(at+".timeout", &p.Timeout, s.Server.PollTimeout.D, true); err != nil {
		return err
	}
	switch {
	case p.Read != "" && !slices.Contains(PollReaders, p.Read):
		return s.errorf(at+".read", "unknown reader %q (known: %s)", p.Read, strings.Join(PollReaders, ", "))
	case p.Read != "" && p.HTTP == "":
		return s.errorf(at+".read", "the %s reader reads an HTTP answer: give the poll's http", p.Read)
	case p.Read != "" && len(p.Match) > 0:
		return s.errorf(at+".match", "the %s reader reads the answer: give match patterns or a reader, not both", p.Read)
	case p.Read == "" && len(p.Match) == 0:
		return s.errorf(at+".match", "missing: say how to read the answer ([[server.poll.match]], or a reader: read = \"nats\")")
	}
	for j := range p.Match {
		if err := s.validatePattern(fmt.Sprintf("%s.match[%d]", at, j), &p.Match[j]); err != nil {
			return err
		}
	}
	return nil
}

// parseTemplates parses every template and runs it on a sample node, so
// that a bad one is an error of the scenario, with its field, and not of a
// run.
func (s *Scenario) parseTemplates() error {
	sv := s.Server
	t := &sv.tmpl
	parse := func(field, text string) (*template.Template, error) {
		tt, err := template.New(field).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, s.errorf(field, "not a template: %v", strings.TrimPrefix(err.Error(), "template: "))
		}
		return tt, nil
	}
	*t = serverTemplates{files: map[string]*template.Template{}, env: map[string]*template.Template{}}
	for i, a := range sv.Command {
		tt, err := parse(fmt.Sprintf("server.command[%d]", i), a)
		if err != nil {
			return err
		}
		t.command = append(t.command, tt)
	}
	for i, a := range sv.ExtraArgs {
		tt, err := parse(fmt.Sprintf("server.extra_args[%d]", i), a)
		if err != nil {
			return err
		}
		t.extraArgs = append(t.extraArgs, tt)
	}
	for i, a := range sv.Replace {
		tt, err := parse(fmt.Sprintf("server.replace[%d]", i), a)
		if err != nil {
			return err
		}
		t.replace = append(t.replace, tt)
	}
	for i, a := range sv.Adapter {
		tt, err := parse(fmt.Sprintf("server.adapter[%d]", i), a)
		if err != nil {
			return err
		}
		t.adapter = append(t.adapter, tt)
	}
	if len(sv.Adapter) > 0 && sv.Adapter[0] == "" {
		return s.errorf("server.adapter", "the program is empty: give the adapter's program and its arguments")
	}
	for _, name := range sortedKeys(sv.Files) {
		at := keyPath("server.files", name)
		if msg := fileKeyProblem(name); msg != "" {
			return s.errorf(at, "not a file inside the node's folder: %s", msg)
		}
		tt, err := parse(at, sv.Files[name])
		if err != nil {
			return err
		}
		t.files[name] = tt
	}
	for _, name := range sortedKeys(sv.Env) {
		at := keyPath("server.env", name)
		if msg := envKeyProblem(name); msg != "" {
			return s.errorf(at, "not a variable's name: %s", msg)
		}
		if strings.ContainsRune(sv.Env[name], 0) {
			return s.errorf(at, "a variable's value may not hold a NUL")
		}
		tt, err := parse(at, sv.Env[name])
		if err != nil {
			return err
		}
		t.env[name] = tt
	}
	for i, p := range sv.Poll {
		var pt pollTemplates
		var err error
		at := sv.pollAt[i]
		for _, f := range []struct {
			key, text string
			out       **template.Template
		}{{"tcp", p.TCP, &pt.tcp}, {"http", p.HTTP, &pt.http}, {"file", p.File, &pt.file}} {
			if f.text != "" {
				if *f.out, err = parse(at+"."+f.key, f.text); err != nil {
					return err
				}
			}
		}
		for j, a := range p.Command {
			tt, err := parse(fmt.Sprintf("%s.command[%d]", at, j), a)
			if err != nil {
				return err
			}
			pt.command = append(pt.command, tt)
		}
		t.polls = append(t.polls, pt)
	}
	ready, err := parseProbe("server.ready", &sv.Ready, parse)
	if err != nil {
		return err
	}
	t.ready = ready
	if err := s.parseSidecarTemplates(parse); err != nil {
		return err
	}
	sample := SampleServerNodes(s)[0]
	if _, err := sv.Render(sample); err != nil {
		field, msg, _ := strings.Cut(strings.TrimPrefix(err.Error(), "template: "), ":")
		return s.errorf(field, "at %s", msg)
	}
	if _, err := sv.RenderAdapter(&AdapterClient{Client: "c1", Dir: "/store/run", Scenario: "/scenario"}); err != nil {
		field, msg, _ := strings.Cut(strings.TrimPrefix(err.Error(), "template: "), ":")
		return s.errorf(field, "at %s", msg)
	}
	return nil
}

// SampleServerNodes are template data for every node of the scenario
// with made-up addresses and folders, as validation renders them.
func SampleServerNodes(s *Scenario) []*ServerNode {
	hosts := func(i, j int) string { return fmt.Sprintf("127.%d.%d.1", i, j) }
	return ServerNodes(s, "/store/run", func(i int) string { return hosts(0, i) },
		func(from, to int) string { return hosts(from, to) }, func(to int) string { return hosts(255, to) },
		func(i int, name string) int { return 10000 + 10*i + slices.Index(s.Server.Ports, name) })
}

// ServerNodes lays out every node's template data: host(i) is node i's
// own address (from 1), link(i, j) the address where i reaches j under
// address links, proxy(j) where every node reaches j under process links,
// and port(i, name) node i's port of that name.
func ServerNodes(s *Scenario, dir string, host func(int) string, link func(int, int) string, proxy func(int) string, port func(int, string) int) []*ServerNode {
	sv := s.Server
	n := s.Nodes
	own := make([]Endpoint, n)
	for i := range own {
		e := Endpoint{ID: NodeName(i), Index: i + 1, Host: host(i + 1), Port: map[string]int{}, Addr: map[string]string{}}
		for _, p := range sv.Ports {
			e.Port[p] = port(i+1, p)
			e.Addr[p] = fmt.Sprintf("%s:%d", e.Host, e.Port[p])
		}
		own[i] = e
	}
	at := func(e Endpoint, h string) Endpoint {
		out := Endpoint{ID: e.ID, Index: e.Index, Host: h, Port: e.Port, Addr: map[string]string{}}
		for _, p := range sv.Ports {
			out.Addr[p] = fmt.Sprintf("%s:%d", h, e.Port[p])
		}
		return out
	}
	folder, err := filepath.Abs(filepath.Dir(s.File))
	if err != nil {
		folder = filepath.Dir(s.File)
	}
	var out []*ServerNode
	for i := range n {
		node := &ServerNode{ID: own[i].ID, Index: i + 1, Dir: dir + "/" + own[i].ID, Host: own[i].Host,
			Port: own[i].Port, Addr: own[i].Addr, Reach: map[string]Endpoint{}, Nodes: own, State: "new", Scenario: folder,
			ElectionTimeout: Span(sv.ElectionTimeout.D), HeartbeatEvery: Span(sv.HeartbeatEvery.D), Tick: Span(sv.Tick.D),
			Majority: n/2 + 1}
		node.Data = node.Dir + "/data"
		for j := range n {
			switch {
			case sv.Links == LinksProcess:
				node.Reach[own[j].ID] = at(own[j], proxy(j+1))
			case i == j:
				node.Reach[own[j].ID] = own[j]
			default:
				node.Reach[own[j].ID] = at(own[j], link(i+1, j+1))
			}
		}
		out = append(out, node)
	}
	return out
}

// fillFrom takes every key left out from the preset, and the preset's
// files and environment variables that the table does not name.
func (sv *Server) fillFrom(p *Server) {
	if sv.Command == nil {
		sv.Command = p.Command
		if sv.ExtraArgsBefore == "" {
			sv.ExtraArgsBefore = p.ExtraArgsBefore // an element of the preset's command
		}
	}
	sv.Files = merged(p.Files, sv.Files)
	sv.Env = merged(p.Env, sv.Env)
	pt := p.timeouts()
	for i, t := range sv.timeouts() {
		if !t.d.Set {
			*t.d = *pt[i].d
		}
	}
	if sv.Ports == nil {
		sv.Ports = p.Ports
	}
	if sv.Peer == nil {
		sv.Peer = p.Peer
	}
	if sv.Links == "" {
		sv.Links = p.Links
	}
	if sv.Network == "" {
		sv.Network = p.Network
	}
	if sv.Isolation == "" {
		sv.Isolation = p.Isolation
	}
	if sv.User == "" {
		sv.User = p.User // Patroni's: PostgreSQL refuses to run as root
	}
	if !sv.Ready.set {
		sv.Ready = p.Ready
	}
	if !sv.StartTimeout.Set {
		sv.StartTimeout = p.StartTimeout
	}
	if sv.ReadyState == "" {
		sv.ReadyState = p.ReadyState
	}
	if !sv.ReadyTimeout.Set {
		sv.ReadyTimeout = p.ReadyTimeout
	}
	if sv.Sidecars == nil {
		sv.Sidecars = p.Sidecars
	}
	if sv.Replace == nil {
		sv.Replace = p.Replace
	}
	if sv.Roles == nil {
		sv.Roles = p.Roles
	}
	if sv.Log == nil {
		sv.Log = p.Log
	}
	if sv.Poll == nil {
		sv.Poll = p.Poll
	}
	if !sv.PollEvery.Set {
		sv.PollEvery = p.PollEvery
	}
	if !sv.PollTimeout.Set {
		sv.PollTimeout = p.PollTimeout
	}
	if !sv.LossReset.Set {
		sv.LossReset = p.LossReset
	}
	if sv.Client == "" {
		sv.Client = p.Client
	}
}

// merged is the preset's table with the scenario's keys over it (nil
// when both are).
func merged(preset, own map[string]string) map[string]string {
	if preset == nil {
		return own
	}
	out := maps.Clone(preset)
	maps.Copy(out, own)
	return out
}

// encodeServer writes a [server] table with the keys sv sets.
func encodeServer(sv *Server) []byte {
	m := map[string]any{}
	str := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	list := func(k string, v []string) {
		if v != nil {
			m[k] = v
		}
	}
	dur := func(k string, d Duration) {
		switch {
		case d.Set && d.Raw != "":
			m[k] = d.Raw // as written, so that the text reads back the same
		case d.Set:
			m[k] = d.D.String()
		}
	}
	patterns := func(ps []Pattern) []map[string]any {
		var out []map[string]any
		for _, p := range ps {
			e := map[string]any{"match": p.Match}
			if p.Role != "" {
				e["role"] = p.Role
			}
			if p.InheritTerm {
				e["inherit_term"] = true
			}
			if p.InheritLeader {
				e["inherit_leader"] = true
			}
			out = append(out, e)
		}
		return out
	}
	str("preset", sv.Preset)
	list("command", sv.Command)
	str("program", sv.Program)
	str("version", sv.Version)
	list("extra_args", sv.ExtraArgs)
	str("extra_args_before", sv.ExtraArgsBefore)
	dur("election_timeout", sv.ElectionTimeout)
	dur("heartbeat_every", sv.HeartbeatEvery)
	dur("tick", sv.Tick)
	if sv.Files != nil {
		m["files"] = sv.Files
	}
	if sv.Env != nil {
		m["env"] = sv.Env
	}
	list("ports", sv.Ports)
	list("peer", sv.Peer)
	str("links", sv.Links)
	if v := sv.Ready.encode(); v != nil {
		m["ready"] = v
	}
	str("isolation", sv.Isolation)
	str("user", sv.User)
	str("network", sv.Network)
	dur("start_timeout", sv.StartTimeout)
	list("replace", sv.Replace)
	if sv.Roles != nil {
		m["roles"] = sv.Roles
	}
	if sv.Log != nil {
		m["log"] = patterns(sv.Log)
	}
	encodePolls := func(ps []Poll) []map[string]any {
		var polls []map[string]any
		for _, p := range ps {
			e := map[string]any{"match": patterns(p.Match)}
			for k, v := range map[string]string{"tcp": p.TCP, "send": p.Send, "http": p.HTTP, "file": p.File} {
				if v != "" {
					e[k] = v
				}
			}
			if p.Command != nil {
				e["command"] = p.Command
			}
			if p.Timeout.Set {
				e["timeout"] = p.Timeout.Raw
			}
			if p.Read != "" {
				e["read"] = p.Read
				delete(e, "match")
			}
			polls = append(polls, e)
		}
		return polls
	}
	if sv.Poll != nil {
		m["poll"] = encodePolls(sv.Poll)
	}
	str("ready_state", sv.ReadyState)
	dur("ready_timeout", sv.ReadyTimeout)
	if sv.Sidecars != nil {
		m["sidecar"] = encodeSidecars(sv.Sidecars, patterns, encodePolls)
	}
	str("client", sv.Client)
	str("reads", sv.Reads)
	str("disk", sv.Disk)
	str("disk_names", sv.DiskNames)
	if sv.ClientProcesses {
		m["client_processes"] = true
	}
	list("adapter", sv.Adapter)
	dur("poll_every", sv.PollEvery)
	dur("poll_timeout", sv.PollTimeout)
	dur("loss_reset", sv.LossReset)
	dur("lock_ttl", sv.LockTTL)
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"server": m}); err != nil {
		panic(fmt.Sprintf("encode [server]: %v", err)) // maps of strings always encode
	}
	return b.Bytes()
}
