package redistest

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A ReplyCutter loses replies after the server has run the command: armed,
// it cuts the connection that sent a matching command as soon as the
// server's answer arrives, before the client reads it. The client then
// reads EOF, and go-redis, with its default MaxRetries, sends the command
// again on a new connection, so the command runs twice while the caller
// sees one call. It is the fault that every write must survive.
type ReplyCutter struct {
	mu    sync.Mutex
	words [][]byte // a command matches when its bytes hold every word
	left  int      // replies still to cut
	cuts  int      // replies cut so far
	then  func()   // to call after the next cut (see Then)
}

// CutClient returns another client of b's server, its options changed by
// tweaks and go-redis's retries left at their defaults, whose replies the
// returned ReplyCutter can cut. Both end when t ends.
func (b *Backend) CutClient(t *testing.T, tweaks ...func(*redis.UniversalOptions)) (redis.UniversalClient, *ReplyCutter) {
	c := &ReplyCutter{}
	client := b.NewClient(t, append([]func(*redis.UniversalOptions){func(o *redis.UniversalOptions) {
		o.Dialer = c.dial
	}}, tweaks...)...)
	return client, c
}

// Arm makes c cut the replies to the next n commands whose bytes, as sent,
// hold every one of words, such as "evalsha" and a key. A command that
// go-redis sends again matches again, so n = 1 loses one reply and lets
// the re-sent command through; n greater than go-redis's MaxRetries loses
// the call's reply for good.
func (c *ReplyCutter) Arm(n int, words ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.words = c.words[:0]
	for _, w := range words {
		c.words = append(c.words, []byte(w))
	}
	c.left = n
}

// Then makes c call f once, after the next reply it cuts has arrived
// and before the client reads that it was lost: between the command's
// first run and go-redis's sending it again, on whatever connection that
// goes (a new connection's dial runs in a goroutine of the pool's, and
// the re-send may take another connection freed meanwhile). f runs in the
// goroutine of the call whose reply is cut.
func (c *ReplyCutter) Then(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.then = f
}

// takeThen returns the function Then left for the cut just made, once.
func (c *ReplyCutter) takeThen() func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.then
	c.then = nil
	return f
}

// Cuts returns how many replies c has cut.
func (c *ReplyCutter) Cuts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cuts
}

// Armed reports whether c has replies still to cut.
func (c *ReplyCutter) Armed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.left > 0
}

// take reports whether the command in p is one whose reply to cut, and
// counts it as cut.
func (c *ReplyCutter) take(p []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return false
	}
	for _, w := range c.words {
		if !bytes.Contains(p, w) {
			return false
		}
	}
	c.left--
	c.cuts++
	return true
}

func (c *ReplyCutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: conn, cutter: c}, nil
}

// A cutConn is a connection whose next reply is lost once a write to it
// matched its cutter.
type cutConn struct {
	net.Conn
	cutter *ReplyCutter
	cut    bool // the reply to the last write is to be lost
}

func (c *cutConn) Write(p []byte) (int, error) {
	if c.cutter.take(p) {
		c.cut = true
	}
	return c.Conn.Write(p)
}

// Read waits, after a matching write, for the server's answer, which
// Redis sends only once it has run the command, and then closes the
// connection instead of passing the answer on.
func (c *cutConn) Read(p []byte) (int, error) {
	if !c.cut {
		return c.Conn.Read(p)
	}
	c.cut = false
	_, err := c.Conn.Read(p)
	c.Conn.Close()
	if f := c.cutter.takeThen(); f != nil {
		f()
	}
	if err == nil {
		err = io.EOF
	}
	return 0, err
}

// EachCutBackend runs test on a real Redis and on a real Cluster, each in
// a subtest through a client of CutClient, after load (a package's
// LoadScripts) has cached its scripts there, so that the reply a test
// cuts is the script's and never a NOSCRIPT.
func EachCutBackend(t *testing.T, load func(context.Context, redis.UniversalClient) error,
	test func(t *testing.T, b *Backend, client redis.UniversalClient, cutter *ReplyCutter)) {
	for _, b := range []*Backend{Redis(t), RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			client, cutter := b.CutClient(t)
			if err := load(context.Background(), client); err != nil {
				t.Fatalf("load the scripts: %v", err)
			}
			test(t, b, client, cutter)
		})
	}
}

// RequireOneMore fails tb unless c has cut exactly one reply more than
// before, and is no longer armed.
func (c *ReplyCutter) RequireOneMore(tb testing.TB, before int) {
	tb.Helper()
	if got := c.Cuts(); got != before+1 {
		tb.Fatalf("the cutter cut %d replies, want one more than %d", got, before)
	}
	if c.Armed() {
		tb.Fatalf("the cutter is still armed: the command it waited for was never sent")
	}
}
