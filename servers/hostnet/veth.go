package hostnet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
)

// VethPair is two namespaces joined directly by a veth pair, with nothing
// of coup's between them: what a benchmark compares coup's network with.
// Its hosts are 10.78.0.1 and 10.78.0.2, named as a network's are, so
// that Leftovers finds them.
type VethPair struct {
	hosts [2]*Host
}

// NewVethPair makes the two namespaces, the veth pair between them, and
// their addresses.
func NewVethPair(a, b string) (*VethPair, error) {
	if _, err := homeNamespace(); err != nil {
		return nil, err
	}
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	t := hex.EncodeToString(tag[:])
	p := &VethPair{}
	for i, id := range []string{a, b} {
		h := &Host{ID: id, Addr: netip.AddrFrom4([4]byte{10, 78, 0, byte(i + 1)}), Namespace: nsName(t, id), i: i}
		h.Path = NamespaceDir + "/" + h.Namespace
		ns, err := addNamespace(h.Namespace)
		if err != nil {
			p.Close()
			return nil, err
		}
		h.ns = ns
		p.hosts[i] = h
	}
	h0, h1 := p.hosts[0], p.hosts[1]
	if err := ipCmd(nil, "link", "add", "veth0", "netns", h0.Namespace, "type", "veth", "peer", "name", "veth0", "netns", h1.Namespace); err != nil {
		p.Close()
		return nil, err
	}
	for _, h := range p.hosts {
		script := fmt.Sprintf("link set lo up\nlink set veth0 up\naddr add %s/24 dev veth0\n", h.Addr)
		if err := ipCmd([]byte(script), "-n", h.Namespace, "-batch", "-"); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// Hosts are the pair's two hosts.
func (p *VethPair) Hosts() [2]*Host { return p.hosts }

// Close removes both namespaces, and the veth pair with them.
func (p *VethPair) Close() error {
	var errs []error
	for _, h := range p.hosts {
		if h == nil || h.ns == nil {
			continue
		}
		h.ns.Close()
		errs = append(errs, deleteNamespace(h.Namespace))
	}
	return errors.Join(errs...)
}
