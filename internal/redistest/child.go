package redistest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tests across processes run the test binary again as child processes. A
// child is the same binary, run with -test.run naming one test and
// ChildRoleEnv set to its role; the test function sees the variable and
// acts as the child. Children reach their parent's Redis through
// ChildAddrsEnv and ChildClusterEnv and never start a server of their own.
// They talk to the parent in lines on stdout, and end by themselves when
// their stdin closes (the parent died) or after ChildLimit.
const (
	ChildRoleEnv    = "SLOTLIMIT_CHILD"         // the child's role; unset in the parent
	ChildAddrsEnv   = "SLOTLIMIT_CHILD_ADDRS"   // comma-separated server addresses
	ChildClusterEnv = "SLOTLIMIT_CHILD_CLUSTER" // "1": the addresses are a Redis Cluster
)

// ChildLimit bounds a child's life, in case its parent neither kills it
// nor closes its stdin.
const ChildLimit = 60 * time.Second

// ChildRole returns the role this process plays as a child, "" in a parent.
func ChildRole() string {
	return os.Getenv(ChildRoleEnv)
}

// A Child is a running child process.
type Child struct {
	Cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string   // stdout, line by line; closed at EOF
	done  chan struct{} // closed when the process has been waited for
	err   error         // from Wait; read after done

	mu     sync.Mutex
	output []string // every stdout line, for failure messages
	stderr bytes.Buffer
}

// A Target is a Redis for children: its addresses, and whether they are a
// Cluster.
type Target struct {
	Addrs   []string
	Cluster bool
}

// Target returns b's Redis as a Target.
func (b *Backend) Target() Target {
	_, cluster := b.Client.(*redis.ClusterClient)
	return Target{Addrs: b.Opts.Addrs, Cluster: cluster}
}

// StartChild runs the test binary again as a child playing role in test,
// on target, with env ("NAME=value") added. The child is killed when t
// ends.
func StartChild(t *testing.T, target Target, test, role string, env ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0],
		"-test.run=^"+test+"$",
		"-test.count=1",
		"-test.timeout="+(ChildLimit+30*time.Second).String(),
	)
	cmd.Env = append(os.Environ(),
		ChildRoleEnv+"="+role,
		ChildAddrsEnv+"="+strings.Join(target.Addrs, ","),
		ChildClusterEnv+"="+map[bool]string{true: "1", false: "0"}[target.Cluster],
	)
	cmd.Env = append(cmd.Env, env...)
	c := &Child{Cmd: cmd, lines: make(chan string, 1024), done: make(chan struct{})}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.output = append(c.output, line)
			c.mu.Unlock()
			select {
			case c.lines <- line:
			default: // nobody reads that far; the line is kept in output
			}
		}
		io.Copy(io.Discard, stdout) //nolint:errcheck // drain after a too-long line
		close(c.lines)
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		c.Cmd.Process.Kill() //nolint:errcheck // it may have exited already
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Errorf("child %d did not exit after being killed", cmd.Process.Pid)
		}
	})
	return c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Transcript is what the child printed, for failure messages.
func (c *Child) Transcript() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("pid %d stdout:\n%s\nstderr:\n%s", c.Cmd.Process.Pid, strings.Join(c.output, "\n"), c.stderr.String())
}

// Await waits for a line starting with prefix and returns the rest of it.
func (c *Child) Await(t *testing.T, prefix string, within time.Duration) string {
	t.Helper()
	_, rest := c.AwaitFirst(t, within, prefix)
	return rest
}

// AwaitFirst waits for a line starting with one of prefixes, and returns
// that prefix and the rest of the line.
func (c *Child) AwaitFirst(t *testing.T, within time.Duration, prefixes ...string) (prefix, rest string) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				<-c.done
				t.Fatalf("child exited (%v) before printing %q\n%s", c.err, prefixes, c.Transcript())
			}
			for _, prefix := range prefixes {
				if rest, found := strings.CutPrefix(line, prefix); found {
					return prefix, rest
				}
			}
		case <-timeout:
			t.Fatalf("child printed no %q within %v\n%s", prefixes, within, c.Transcript())
		}
	}
}

// Wait waits for the child to exit and returns its Wait error.
func (c *Child) Wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(within):
		t.Fatalf("child did not exit within %v\n%s", within, c.Transcript())
		return nil
	}
}

// ChildSetup connects a child to its parent's Redis with a pool of pool
// connections, and returns a context that ends when the parent closes
// the child's stdin (or dies) or when ChildLimit has passed.
func ChildSetup(t *testing.T, pool int) (context.Context, redis.UniversalClient) {
	addrs := strings.Split(os.Getenv(ChildAddrsEnv), ",")
	if addrs[0] == "" {
		t.Fatalf("child without %s", ChildAddrsEnv)
	}
	var client redis.UniversalClient
	if os.Getenv(ChildClusterEnv) == "1" {
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: pool})
	} else {
		client = redis.NewClient(&redis.Options{Addr: addrs[0], PoolSize: pool})
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), ChildLimit)
	t.Cleanup(cancel)
	go func() {
		io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end of stdin will do
		cancel()
	}()
	return ctx, client
}
