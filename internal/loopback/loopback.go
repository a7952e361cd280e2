// Package loopback finds free ports on 127.0.0.1 and waits for a port to
// close, for the tests' own servers.
package loopback

import (
	"net"
	"time"
)

const (
	dialTimeout = 50 * time.Millisecond // a dial not answered by then counts as closed
	pollEvery   = 10 * time.Millisecond // the pause between dials while the port is open
)

// FreeAddr returns the address, "127.0.0.1:port", of a TCP port that was
// free when FreeAddr looked: it binds port 0, notes the port the system
// chose, and releases it. Another process may take the port before the
// caller binds it, so a caller that starts a server on it should retry
// with a new address when the server cannot bind. FreeAddr returns an
// error only when it cannot bind a loopback port at all.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// AwaitClosed dials addr over TCP until a dial fails, as it does once the
// server that listened there has exited and the port is released, and
// reports whether that happened within the given time. A dial that is
// refused, or not answered within 50ms, counts as closed. AwaitClosed
// dials at least once, every 10ms while the port accepts, closing each
// connection at once; when within has passed with the port still open,
// it returns false.
func AwaitClosed(addr string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, dialTimeout)
		if err != nil {
			return true
		}
		c.Close()
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}
