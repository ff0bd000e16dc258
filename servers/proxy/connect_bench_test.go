package proxy

import (
	"io"
	"net"
	"testing"

	"github.com/coupharness/coup/nemesis"
)

// BenchmarkConnect measures a connect through the proxy and the first
// byte's round trip to an echo target, with no fault in force: the accept
// loop's gate (a policy call and a deadline per accept) and the dial of
// the target are on this path. BenchmarkConnectDirect is the same without
// the proxy.
func BenchmarkConnect(b *testing.B) {
	echo := echoTarget(b)
	p, err := Listen(Config{Listen: "127.0.0.1:0", To: "n2", Target: echo, From: "n1", Policy: newPolicy()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchConnect(b, p.Addr().String())
}

func BenchmarkConnectDirect(b *testing.B) { benchConnect(b, echoTarget(b)) }

func benchConnect(b *testing.B, addr string) {
	buf := []byte{1}
	for b.Loop() {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// echoTarget listens on loopback and echoes every connection until the
// benchmark ends.
func echoTarget(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkShutAndOpen measures a stall's cost at the listen queue: the
// queue shut (listen(2) again, two plugs dialled) and opened again (the
// plugs accepted and closed), one cycle per iteration.
func BenchmarkShutAndOpen(b *testing.B) {
	pol := newPolicy()
	shut, open := make(chan struct{}, 1), make(chan struct{}, 1)
	p, err := Listen(Config{Listen: "127.0.0.1:0", To: "n2", Target: echoTarget(b), From: "n1", Policy: pol,
		Events: func(e Event) {
			switch e.Kind {
			case EventShut:
				shut <- struct{}{}
			case EventOpenQueue:
				open <- struct{}{}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		pol.set(n1n2, nemesis.Stall)
		p.Changed()
		<-shut
		pol.set(n1n2, nemesis.NoCut)
		p.Changed()
		<-open
	}
}
