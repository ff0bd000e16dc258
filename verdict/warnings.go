package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coupharness/coup/history"
)

// warningsOf are what a person must know to trust the run that no check
// judges: for now, nodes that sent messages without a checksum while
// checksums were on (the pipe driver counts them, history.CountUnsummed),
// so that a corruption of those messages is caught only where it breaks
// their JSON.
func warningsOf(h *history.History, counts map[string]int64) []string {
	var out []string
	if h.Meta.Network == "proxy" {
		out = append(out, ProxyLoses)
	}
	if w := unsummedWarning(h, counts); w != "" {
		out = append(out, w)
	}
	return out
}

// ProxyLoses says, in one line, what a run of real servers on the TCP
// proxy network (network = "proxy", or what "auto" gives where no
// namespace can be had) cannot fault.
const ProxyLoses = "only TCP between hosts is faulted; UDP and other protocols pass untouched (network = \"proxy\": a TCP proxy per link on loopback; coup's packet network, network = \"namespaces\", faults every packet)"

// unsummedWarning is the warning of nodes that sent messages without a
// checksum while checksums were on, or "".
func unsummedWarning(h *history.History, counts map[string]int64) string {
	if !h.Meta.Checksums {
		return ""
	}
	var nodes []string
	for k := range counts {
		if name, ok := strings.CutPrefix(k, history.CountUnsummed+"."); ok && counts[k] > 0 {
			nodes = append(nodes, name)
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	slices.Sort(nodes)
	parts := make([]string, len(nodes))
	var total int64
	for i, n := range nodes {
		c := counts[history.CountUnsummed+"."+n]
		total += c
		parts[i] = fmt.Sprintf("%s %d", n, c)
	}
	who := fmt.Sprintf("%d nodes", len(nodes))
	if len(nodes) == 1 {
		who = nodes[0]
	}
	return fmt.Sprintf("checksums are on, but %s sent %d messages without one (%s): a corruption of those is caught only where it breaks their JSON, and integrity cannot vouch for them; a node sums each body and sends the sum in the envelope (\"sum\", see docs/protocol.md), or the scenario sets checksums = false",
		who, total, strings.Join(parts, ", "))
}
