package hostnet

import (
	"encoding/binary"
	"net/netip"
)

// The IP protocol numbers the network looks into; every other protocol
// (VRRP's 112, SCTP, GRE…) is carried and faulted as an opaque payload.
const (
	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17
	protoVRRP = 112
)

// packet is what the network reads of one IPv4 packet: its addresses, its
// protocol and where its transport payload starts.
type packet struct {
	b        []byte // the whole packet, header first
	src, dst netip.Addr
	proto    byte
	ihl      int // the IP header's length
	// payload is where the transport payload starts: after the TCP or
	// UDP header, or after the IP header for any other protocol.
	payload int
	// fragment marks a packet that is part of a fragmented datagram
	// other than its first: its transport header is elsewhere.
	fragment bool
}

// parse reads an IPv4 packet; ok is false for anything else (IPv6, a
// header that does not fit), which the network drops.
func parse(b []byte) (p packet, ok bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return p, false
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	if ihl < 20 || total < ihl || total > len(b) {
		return p, false
	}
	p = packet{b: b[:total], proto: b[9], ihl: ihl, payload: ihl}
	p.src = netip.AddrFrom4([4]byte(b[12:16]))
	p.dst = netip.AddrFrom4([4]byte(b[16:20]))
	p.fragment = binary.BigEndian.Uint16(b[6:8])&0x1fff != 0
	if p.fragment {
		return p, true
	}
	switch p.proto {
	case protoTCP:
		if total >= ihl+20 {
			off := int(b[ihl+12]>>4) * 4
			if off >= 20 && ihl+off <= total {
				p.payload = ihl + off
			}
		}
	case protoUDP:
		if total >= ihl+8 {
			p.payload = ihl + 8
		}
	}
	return p, true
}

// protoName names a packet's protocol, as the history's message type.
func protoName(proto byte) string {
	switch proto {
	case protoICMP:
		return "icmp"
	case protoTCP:
		return "tcp"
	case protoUDP:
		return "udp"
	case protoVRRP:
		return "vrrp"
	}
	return "ip"
}

// tcpFlags are a TCP segment's flags (0 for anything else).
func (p packet) tcpFlags() byte {
	if p.proto != protoTCP || p.fragment || p.payload == p.ihl {
		return 0
	}
	return p.b[p.ihl+13]
}

// TCP's flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpACK = 0x10
)

// checksum is the Internet checksum (RFC 1071) of b, added to sum.
func checksum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// fixIP recomputes an IPv4 header's checksum.
func fixIP(b []byte, ihl int) {
	b[10], b[11] = 0, 0
	binary.BigEndian.PutUint16(b[10:12], fold(checksum(0, b[:ihl])))
}

// fixTransport recomputes a TCP or UDP checksum over the pseudo-header
// and the segment, as a sender would have over the bytes now in it: a
// corruption made so reaches the application, as one the link's and the
// sender's checks missed would.
func fixTransport(p packet) {
	seg := p.b[p.ihl:]
	var at int
	switch p.proto {
	case protoTCP:
		at = 16
	case protoUDP:
		at = 6
	default:
		return
	}
	if p.fragment || len(seg) < at+2 {
		return
	}
	seg[at], seg[at+1] = 0, 0
	sum := checksum(0, p.b[12:20])
	sum += uint32(p.proto) + uint32(len(seg))
	sum = checksum(sum, seg)
	c := fold(sum)
	if c == 0 && p.proto == protoUDP {
		c = 0xffff // 0 means no checksum in UDP
	}
	binary.BigEndian.PutUint16(seg[at:at+2], c)
}

// ipHeader writes a 20-byte IPv4 header for a packet of total bytes.
func ipHeader(b []byte, total int, proto byte, src, dst netip.Addr) {
	b[0], b[1] = 0x45, 0
	binary.BigEndian.PutUint16(b[2:4], uint16(total))
	b[4], b[5], b[6], b[7] = 0, 0, 0x40, 0 // no id, don't fragment
	b[8], b[9] = 64, proto
	s, d := src.As4(), dst.As4()
	copy(b[12:16], s[:])
	copy(b[16:20], d[:])
	fixIP(b, 20)
}

// resetFor is the TCP reset that answers p as a refusing host would: from
// p's destination to its source, on the same ports. It is nil for a
// segment that is itself a reset (never answered) or not TCP.
func resetFor(p packet) []byte {
	f := p.tcpFlags()
	if p.proto != protoTCP || p.fragment || p.payload == p.ihl || f&tcpRST != 0 {
		return nil
	}
	in := p.b[p.ihl:]
	b := make([]byte, 40)
	ipHeader(b, 40, protoTCP, p.dst, p.src)
	t := b[20:]
	copy(t[0:2], in[2:4]) // ports swapped
	copy(t[2:4], in[0:2])
	t[12] = 5 << 4
	if f&tcpACK != 0 {
		copy(t[4:8], in[8:12]) // seq = their ack
		t[13] = tcpRST
	} else {
		n := uint32(len(p.b) - p.payload)
		if f&tcpSYN != 0 {
			n++
		}
		if f&tcpFIN != 0 {
			n++
		}
		binary.BigEndian.PutUint32(t[8:12], binary.BigEndian.Uint32(in[4:8])+n)
		t[13] = tcpRST | tcpACK
	}
	rp, _ := parse(b)
	fixTransport(rp)
	return b
}

// ICMP's destination-unreachable codes the network sends.
const (
	icmpUnreachable      = 3
	icmpPortUnreachable  = 3
	icmpAdminProhibited  = 13
	icmpUnreachableBytes = 8 // of the datagram's payload quoted, after its header
)

// unreachableFor is the ICMP destination unreachable that answers p as a
// refusing host would: port unreachable for UDP (a connected socket then
// reads ECONNREFUSED), administratively prohibited for any other
// protocol. It is nil for ICMP itself, for a fragment other than the
// first and for multicast and broadcast destinations (never answered, as
// RFC 1122 says).
func unreachableFor(p packet) []byte {
	if p.proto == protoICMP || p.fragment || !p.dst.IsGlobalUnicast() {
		return nil
	}
	code := byte(icmpAdminProhibited)
	if p.proto == protoUDP {
		code = icmpPortUnreachable
	}
	quote := min(len(p.b), p.ihl+icmpUnreachableBytes)
	b := make([]byte, 20+8+quote)
	ipHeader(b, len(b), protoICMP, p.dst, p.src)
	m := b[20:]
	m[0], m[1] = icmpUnreachable, code
	copy(m[8:], p.b[:quote])
	binary.BigEndian.PutUint16(m[2:4], fold(checksum(0, m)))
	return b
}
