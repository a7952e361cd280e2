// Package redistest starts throwaway redis-server processes on free
// loopback ports, for tests and benchmarks that need a real Redis. It never
// connects to a server it did not start, except one named explicitly by
// the SLOTLIMIT_REDIS_ADDR environment variable.
package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/loopback"
)

// Environment variables read by this package and its callers.
const (
	// AddrEnv names an existing server to use instead of starting one.
	AddrEnv = "SLOTLIMIT_REDIS_ADDR"
	// RequireEnv, set to 1, turns a missing server into a failure.
	RequireEnv = "SLOTLIMIT_REQUIRE_REDIS"
)

// ErrNoServer is returned by Start when redis-server is not on PATH.
var ErrNoServer = errors.New("redistest: redis-server not found on PATH")

const (
	startTimeout = 10 * time.Second // bounds how long Start waits for a new server to answer PING
	killTimeout  = time.Second      // bounds the wait for a killed server to free its port
)

// A Server is a redis-server process listening on 127.0.0.1.
type Server struct {
	Addr string // host:port

	args    []string
	wrapper []string // runs redis-server, as valgrind does; nil runs it directly
	dir     string
	cmd     *exec.Cmd
	tls     *tls.Config // a client's, for a server that listens only for TLS (see StartTLS)
}

// Start runs redis-server on a free loopback port with no persistence,
// plus any extra configuration args (such as "--appendonly", "yes"), and
// waits until it answers PING.
func Start(args ...string) (*Server, error) {
	return StartUnder(nil, args...)
}

// StartUnder is Start with redis-server run by the command wrapper: the
// process is wrapper[0], given wrapper[1:], then redis-server's path and
// arguments, as in valgrind --tool=callgrind redis-server. A nil wrapper
// runs redis-server itself. Restart runs it under wrapper again.
func StartUnder(wrapper []string, args ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoServer
	}
	dir, err := os.MkdirTemp("", "slotlimit-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, args: args, wrapper: wrapper}
	// A port found free can be taken before the server binds it; try a few.
	for range 5 {
		if s.Addr, err = loopback.FreeAddr(); err != nil {
			break
		}
		if err = s.run(bin); err == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("redistest: could not start redis-server: %w", err)
}

// run starts the process on s.Addr and waits for it to answer.
func (s *Server) run(bin string) error {
	_, port, _ := net.SplitHostPort(s.Addr)
	ports := []string{"--port", port}
	if s.tls != nil {
		ports = []string{"--port", "0", "--tls-port", port}
	}
	args := append(append(ports,
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	), s.args...)
	if len(s.wrapper) > 0 {
		args = append(append(s.wrapper[1:len(s.wrapper):len(s.wrapper)], bin), args...)
		bin = s.wrapper[0]
	}
	cmd := exec.Command(bin, args...)
	if err := startWithParentDeathSignal(cmd); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd = cmd

	client := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: s.tls, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer client.Close()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited at start; see %s", s.Addr, filepath.Join(s.dir, "redis.log"))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("redis-server on %s did not answer within %v", s.Addr, startTimeout)
}

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() {
	s.kill()
}

// Restart kills the server and starts it again on the same port with the
// same configuration and data directory.
func (s *Server) Restart() error {
	s.kill()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return ErrNoServer
	}
	return s.run(bin)
}

// Close stops the server and removes its data directory.
func (s *Server) Close() {
	s.kill()
	os.RemoveAll(s.dir)
}

func (s *Server) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	loopback.AwaitClosed(s.Addr, killTimeout)
	s.cmd = nil
}
