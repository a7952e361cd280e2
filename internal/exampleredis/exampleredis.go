// Package exampleredis gives the runnable examples their Redis: an
// embedded miniredis by default, or a real server on a loopback address.
package exampleredis

import (
	"fmt"
	"net"

	"github.com/alicebob/miniredis/v2"
)

// Open returns the address of the Redis an example runs on: addr, which
// must be a loopback address, or, when addr is empty, a miniredis started
// for the example, whose key expiry follows the wall clock as a real
// server's does. The returned close stops the miniredis, if one was
// started; it is never nil.
func Open(addr string) (server string, close func(), err error) {
	if addr != "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !net.ParseIP(host).IsLoopback() && host != "localhost" {
			return "", nil, fmt.Errorf("-redis %s: only a loopback address is allowed", addr)
		}
		return addr, func() {}, nil
	}
	mr, err := miniredis.Run()
	if err != nil {
		return "", nil, err
	}
	mr.ClockTTL(true)
	return mr.Addr(), mr.Close, nil
}
