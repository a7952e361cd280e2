package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A reply is an error reply as Redis sends it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func TestTriesClassifyErrors(t *testing.T) {
	steps := []struct {
		err   error
		mend  mend
		wrote bool
	}{
		{reply("MOVED 3999 127.0.0.1:6381"), untilDone, false},
		{reply("ASK 3999 127.0.0.1:6381"), untilDone, false},
		{reply("TRYAGAIN Multiple keys request during rehashing of slot"), untilDone, false},
		{reply("CLUSTERDOWN The cluster is down"), untilDone, false},
		{reply("ERR Error running script (call to f_0123): @user_script:5: Script attempted to access a non local key in a cluster node"), untilDone, false},
		{reply("LOADING Redis is loading the dataset in memory"), asRetries, false},
		{reply("READONLY You can't write against a read only replica."), asRetries, false},
		{reply("MASTERDOWN Link with MASTER is down"), asRetries, false},
		{reply("WRONGTYPE Operation against a key holding the wrong kind of value"), never, false},
		{reply("NOSCRIPT No matching script"), never, false},
		{reply("ERR wrong number of arguments"), never, false},
		{fmt.Errorf("wrapped: %w", reply("TRYAGAIN x")), untilDone, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, asRetries, false},
		{redis.ErrPoolTimeout, asRetries, false},
		{redis.ErrClosed, never, false},
		{context.Canceled, never, false},
		{context.DeadlineExceeded, never, false},
		{fmt.Errorf("pool: %w", context.DeadlineExceeded), never, false},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, asRetries, true},
		{&net.OpError{Op: "write", Err: errors.New("broken pipe")}, asRetries, true},
		{io.EOF, asRetries, true},
	}
	for i, s := range steps {
		if got := mendable(s.err); got != s.mend {
			t.Errorf("step %d: mendable(%v) = %d, want %d", i, s.err, got, s.mend)
		}
		if got := mayHaveWritten(s.err); got != s.wrote {
			t.Errorf("step %d: mayHaveWritten(%v) = %v, want %v", i, s.err, got, s.wrote)
		}
	}
}

func TestRedirectReadsItsAddress(t *testing.T) {
	steps := []struct {
		err        error
		moved, ask bool
		addr       string
	}{
		{reply("MOVED 3999 127.0.0.1:6381"), true, false, "127.0.0.1:6381"},
		{reply("ASK 12 10.0.0.2:7000"), false, true, "10.0.0.2:7000"},
		{reply("TRYAGAIN Multiple keys"), false, false, ""},
		{errors.New("MOVED 1 a:1"), false, false, ""}, // not a reply
	}
	for i, s := range steps {
		moved, ask, addr := redirect(s.err)
		if moved != s.moved || ask != s.ask || addr != s.addr {
			t.Errorf("step %d: redirect(%v) = %v, %v, %q; want %v, %v, %q", i, s.err, moved, ask, addr, s.moved, s.ask, s.addr)
		}
	}
}
