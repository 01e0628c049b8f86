//go:build unix

package deadaddr

import (
	"fmt"
	"net/netip"
	"syscall"
)

// hold binds a TCP socket to 127.0.0.1 on a port the kernel picks and never
// listens on it: SYNs to it are answered with a reset.
func hold() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("socket: %w", err)
	}
	closeFn := func() { _ = syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		closeFn()
		return "", nil, fmt.Errorf("bind 127.0.0.1:0: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		closeFn()
		return "", nil, fmt.Errorf("getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		closeFn()
		return "", nil, fmt.Errorf("getsockname: %T, want an IPv4 address", sa)
	}
	return netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port)).String(), closeFn, nil
}
