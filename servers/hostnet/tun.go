package hostnet

import (
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// Interface is the name of the one interface of every host's namespace:
// a TUN device whose other end is coup.
const Interface = "coup0"

// openTUN makes the TUN device of a namespace and returns the file coup
// reads and writes it by: each read is one IP packet the host sent out
// (no header before it), each write one that the host receives. The file
// is non-blocking, so that Go's poller waits on it and closing it ends a
// read under way.
func openTUN(ns *os.File) (*os.File, error) {
	var f *os.File
	err := inNamespace(ns, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open /dev/net/tun: %w", err)
		}
		req, err := unix.NewIfreq(Interface)
		if err != nil {
			unix.Close(fd)
			return err
		}
		req.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, req); err != nil {
			unix.Close(fd)
			return fmt.Errorf("make the TUN device %s: %w", Interface, err)
		}
		f = os.NewFile(uintptr(fd), "/dev/net/tun")
		return nil
	})
	return f, err
}

// configure gives a namespace's interface its address and MTU, brings it
// and the loopback up, and routes multicast out of it. The subnet's route
// is the only other: nothing is routed beyond the network.
func configure(name string, addr netip.Prefix, mtu int) error {
	script := fmt.Sprintf("link set lo up\nlink set %[1]s mtu %[2]d up\naddr add %[3]s dev %[1]s\nroute add 224.0.0.0/4 dev %[1]s\n",
		Interface, mtu, addr)
	return ipCmd([]byte(script), "-n", name, "-batch", "-")
}
