package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"
)

// Probe says when a process of a host is ready: the server's, and each
// sidecar's (its ready key). It is one of
//
//	ready = "client"                                   # a port that accepts connections
//	ready = { port = "client" }                        # the same
//	ready = { command = ["etcdctl", "endpoint", "health"] }   # a command that exits 0
//	ready = { http = "http://{{.Addr.client}}/health", match = '"health":"true"' }
//
// an HTTP GET that answers 2xx, and whose body, when match is given,
// matches it. A command's stdout may be matched too. The command and the
// URL are templates of ServerNode; the command runs in the node's
// folder, on the node's host, with the server's environment.
type Probe struct {
	// Port is the name of a port that accepts connections once ready.
	Port string
	// Command is a program that exits 0 once ready, and its arguments.
	Command []string
	// HTTP is a URL that answers 2xx once ready.
	HTTP string
	// Match, when set, is a regular expression that the answer (the
	// HTTP body, the command's stdout) must match too.
	Match string

	set bool
	err string
	re  *regexp.Regexp
}

// UnmarshalTOML records the probe; it never fails, so that validation
// can report the error with the key's position.
func (p *Probe) UnmarshalTOML(v any) error {
	p.set = true
	switch x := v.(type) {
	case string:
		p.Port = x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, isStr := x[k].(string)
			switch k {
			case "port", "http", "match":
				if !isStr {
					p.err = fmt.Sprintf("%s: want a string, got %v", k, x[k])
					return nil
				}
				*map[string]*string{"port": &p.Port, "http": &p.HTTP, "match": &p.Match}[k] = s
			case "command":
				list, ok := x[k].([]any)
				if !ok {
					p.err = fmt.Sprintf("command: want the program and its arguments, as strings, got %v", x[k])
					return nil
				}
				for _, e := range list {
					a, ok := e.(string)
					if !ok {
						p.err = fmt.Sprintf("command: want strings, got %v", e)
						return nil
					}
					p.Command = append(p.Command, a)
				}
			default:
				p.err = fmt.Sprintf("unknown key %q of a ready probe (known: port, command, http, match)", k)
				return nil
			}
		}
	default:
		p.err = fmt.Sprintf("want a port's name, or a probe { port = …, command = […], http = …, match = … }, got %v", v)
	}
	return nil
}

// IsZero reports whether the probe says nothing (ready at once, for a
// sidecar without ports).
func (p *Probe) IsZero() bool { return p.Port == "" && len(p.Command) == 0 && p.HTTP == "" }

// Regexp is the probe's match, compiled (nil without one).
func (p *Probe) Regexp() *regexp.Regexp { return p.re }

// String says what the probe waits for, for messages: "port client",
// "the command [etcdctl endpoint health]", "GET http://…".
func (p *Probe) String() string {
	switch {
	case p.Port != "":
		return "port " + p.Port
	case len(p.Command) > 0:
		return fmt.Sprintf("the command %q", p.Command)
	case p.HTTP != "":
		return "GET " + p.HTTP
	}
	return "nothing"
}

// validateProbe checks a probe whose key is at, among the ports of its
// process (whose says whose: "the ports", "the sidecar's ports"); def is
// the port taken when the probe is not given ("" for none).
func (s *Scenario) validateProbe(at string, p *Probe, whose string, ports []string, def string) error {
	if p.err != "" {
		return s.errorf(at, "%s", p.err)
	}
	if !p.set || p.IsZero() && p.Match == "" {
		*p = Probe{Port: def, set: p.set}
		return nil
	}
	n := 0
	for _, b := range []bool{p.Port != "", len(p.Command) > 0, p.HTTP != ""} {
		if b {
			n++
		}
	}
	switch {
	case n != 1:
		return s.errorf(at, "give exactly one of port, command and http (%d given)", n)
	case p.Port != "" && !slices.Contains(ports, p.Port):
		return s.errorf(at, "%q is not one of %s (%s)", p.Port, whose, strings.Join(ports, ", "))
	case p.Port != "" && p.Match != "":
		return s.errorf(at, "match reads an answer: a port gives none (give http or command)")
	case len(p.Command) > 0 && p.Command[0] == "":
		return s.errorf(at, "the command's program is empty")
	}
	if p.Match != "" {
		re, err := regexp.Compile(p.Match)
		if err != nil {
			return s.errorf(at, "match: not a regular expression: %v", err)
		}
		p.re = re
	}
	return nil
}

// probeTemplates are a probe's parsed templates.
type probeTemplates struct {
	http    *template.Template
	command []*template.Template
}

func parseProbe(at string, p *Probe, parse func(field, text string) (*template.Template, error)) (probeTemplates, error) {
	var pt probeTemplates
	var err error
	if p.HTTP != "" {
		if pt.http, err = parse(at+".http", p.HTTP); err != nil {
			return pt, err
		}
	}
	for i, a := range p.Command {
		t, err := parse(fmt.Sprintf("%s.command[%d]", at, i), a)
		if err != nil {
			return pt, err
		}
		pt.command = append(pt.command, t)
	}
	return pt, nil
}

// RenderedProbe is a probe filled in for one node.
type RenderedProbe struct {
	// What says what the probe waits for, as written (Probe.String).
	What string
	// Addr is the port's host:port, where the process listens.
	Addr string
	// HTTP is the URL, Command the program and its arguments.
	HTTP    string
	Command []string
	// Match must match the answer, when not nil.
	Match *regexp.Regexp
}

// IsZero reports whether the probe waits for nothing.
func (r *RenderedProbe) IsZero() bool { return r.Addr == "" && r.HTTP == "" && len(r.Command) == 0 }

func (pt probeTemplates) render(p Probe, n *ServerNode) (RenderedProbe, error) {
	out := RenderedProbe{What: p.String(), Match: p.re}
	if p.Port != "" {
		out.Addr = n.Addr[p.Port]
	}
	var err error
	if pt.http != nil {
		if out.HTTP, err = execOne(pt.http, n); err != nil {
			return out, err
		}
	}
	if out.Command, err = execAll(pt.command, n); err != nil {
		return out, err
	}
	switch {
	case out.HTTP != "":
		out.What = "GET " + out.HTTP
	case len(out.Command) > 0:
		out.What = fmt.Sprintf("the command %q", out.Command)
	}
	return out, nil
}

// encode is the probe as a TOML value ("" when it says nothing).
func (p *Probe) encode() any {
	if p.Port != "" && p.Match == "" {
		return p.Port
	}
	if p.IsZero() {
		return nil
	}
	m := map[string]any{}
	if p.HTTP != "" {
		m["http"] = p.HTTP
	}
	if p.Command != nil {
		m["command"] = p.Command
	}
	if p.Match != "" {
		m["match"] = p.Match
	}
	return m
}
