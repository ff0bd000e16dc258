package scenario

import (
	"fmt"
	"strings"
)

// OnEach is [workload] on's default: one client per host in turn.
const OnEach = "each"

// ClientHosts says which host each client of a real-server scenario sits
// on ([workload] on): "each" (the default: client ci on the ((i−1) mod
// n)-th node's host, so one client per host when there are as many), a
// node's name (every client on that host), or a list of names (ci on the
// ((i−1) mod len)-th). Every connection a client opens, to any member,
// crosses coup's proxy as a link from its host, so that a partition cuts
// clients as it cuts servers. Validation leaves the hosts in Names, "each"
// spelt out.
type ClientHosts struct {
	Names []string
	Set   bool
	err   string
}

// UnmarshalTOML records the hosts; it never fails, so that validation can
// report the error with the key's position.
func (h *ClientHosts) UnmarshalTOML(v any) error {
	h.Set = true
	switch x := v.(type) {
	case string:
		h.Names = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				h.err = fmt.Sprintf("want node names as strings, got %v", e)
				return nil
			}
			h.Names = append(h.Names, s)
		}
		if len(h.Names) == 0 {
			h.err = "an empty list places no client: leave it out for one client per host"
		}
	default:
		h.err = fmt.Sprintf("want %q, a node's name, or a list of names; got %v", OnEach, v)
	}
	return nil
}

// HostOf is the host client ci sits on (i from 1), once validated.
func (h *ClientHosts) HostOf(i int) string {
	if len(h.Names) == 0 || i < 1 {
		return ""
	}
	return h.Names[(i-1)%len(h.Names)]
}

// validateClientHosts checks [workload] on, and spells out "each".
func (s *Scenario) validateClientHosts() error {
	h := &s.Workload.On
	switch {
	case !h.Set:
	case s.Server == nil:
		return s.errorf("workload.on", "only for real servers ([server]): a protocol node's clients are coup's own, outside the network")
	case h.err != "":
		return s.errorf("workload.on", "%s", h.err)
	case len(h.Names) == 1 && h.Names[0] == OnEach:
	default:
		for _, n := range h.Names {
			if n == OnEach {
				return s.errorf("workload.on", "%q stands alone, not in a list", OnEach)
			}
			if err := s.node("workload.on", n); err != nil {
				return err
			}
		}
		return nil
	}
	h.Names = s.NodeNames()
	return nil
}

// encode is [workload] on as the file writes it: "" for the default.
func (h *ClientHosts) encode(all []string) any {
	switch {
	case !h.Set || len(h.Names) == 0 || strings.Join(h.Names, ",") == strings.Join(all, ","):
		return nil
	case len(h.Names) == 1:
		return h.Names[0]
	}
	return h.Names
}
