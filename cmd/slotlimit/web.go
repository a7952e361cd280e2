package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// The command web: a live page of every primitive in a Redis, served over
// HTTP (webserver.go), fed by a sampler (websample.go) that reads each
// primitive once a second through the library's own calls (webread.go).

// defaultListen is where web listens without -listen.
const defaultListen = "127.0.0.1:8379"

// webConfig is web's own flags.
type webConfig struct {
	listen      string
	allowWrites bool
	allowRemote bool
}

func webFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.web.listen, "listen", defaultListen, "the `ADDR` (host:port) to serve the page on; port 0 picks a free one")
	fs.BoolVar(&c.web.allowWrites, "allow-writes", false, "offer the page's writes (force-release, lock break, requeue, drop, cancel, rate reset), each needing the token printed at start")
	fs.BoolVar(&c.web.allowRemote, "allow-remote", false, "allow -listen on an address other than loopback")
}

// webContext is the context web runs under until SIGINT or SIGTERM; a
// test replaces it to stop a web it runs in-process.
var webContext = context.Background

// runWeb serves the page until SIGINT, SIGTERM or the end of webContext.
// Its first line on stdout is "listening on http://ADDR", with the address
// bound; with -allow-writes, the second is "write token: TOKEN".
func runWeb(c *cli, _ []string) error {
	if err := checkListen(c.web.listen, c.web.allowRemote); err != nil {
		return err
	}
	var token string
	if c.web.allowWrites {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		token = hex.EncodeToString(b[:])
	}
	ctx, stop := signal.NotifyContext(webContext(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	l, err := net.Listen("tcp", c.web.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.web.listen, err)
	}
	each := c.timeout
	s := newWebServer(c, l.Addr().String(), token,
		func(ctx context.Context) ([]found, error) { return findPrimitives(ctx, c.client, "", "", each) },
		func(ctx context.Context, f *found) { describe(ctx, c.client, f, each) })
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(c.stdout, "listening on http://%s\n", s.addr)
	if token != "" {
		fmt.Fprintf(c.stdout, "write token: %s\n", token)
		fmt.Fprintf(c.stdout, "open http://%s/#token=%s to write from the page\n", s.addr, token)
	} else {
		fmt.Fprintln(c.stdout, "read-only: give -allow-writes for the page's writes")
	}

	go s.sampler.run(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut) // event streams end with ctx, which is their base
		err = <-served
	}
	s.sampler.wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("serve: %w", err)
}

// checkListen refuses an -listen that is not host:port, and one beyond
// loopback without -allow-remote.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("-listen %q: %v", addr, err)
	}
	if !allowRemote && !isLoopbackHost(host) {
		return usageErrorf("-listen %s: not a loopback address, so others could reach the page; give -allow-remote to serve it there", addr)
	}
	return nil
}

// isLoopbackHost reports whether host, from a host:port, names only the
// loopback interface: "localhost", or a loopback IP address. An empty
// host, every interface, does not.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
