//go:build !unix

package deadaddr

import "net"

// hold falls back to a port that was just free: without a bound,
// non-listening socket the port may be given to another server later.
func hold() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", nil, err
	}
	return addr, func() {}, nil
}
