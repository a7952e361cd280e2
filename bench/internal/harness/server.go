package harness

import (
	"fmt"
	"net"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A Server is the Redis a run loads: one it started, or one named by
// -redis.
type Server struct {
	Addr    string // host:port
	started *redistest.Server
}

// StartServer returns a Server at addr, which must be a loopback address,
// or, when addr is empty, a redis-server started on a free loopback port;
// that one needs redis-server on PATH, and Close stops it.
func StartServer(addr string) (*Server, error) {
	if addr != "" {
		if !IsLoopback(addr) {
			return nil, fmt.Errorf("-redis %s: only a loopback address is allowed", addr)
		}
		return &Server{Addr: addr}, nil
	}
	srv, err := redistest.Start()
	if err != nil {
		return nil, fmt.Errorf("no -redis given and %w", err)
	}
	return &Server{Addr: srv.Addr, started: srv}, nil
}

// Started reports whether the Server was started by StartServer.
func (s *Server) Started() bool {
	return s.started != nil
}

// Close stops the server and removes its data if StartServer started it,
// and does nothing otherwise.
func (s *Server) Close() {
	if s.started != nil {
		s.started.Close()
		s.started = nil
	}
}

// IsLoopback reports whether addr's host is a loopback address or
// localhost.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
