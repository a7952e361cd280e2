package loopback_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/loopback"
)

// FreeAddr names a port on 127.0.0.1 that can be bound.
func TestFreeAddrCanBeBound(t *testing.T) {
	addr, err := loopback.FreeAddr()
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port FreeAddr returned is taken")
	l.Close()
}

// AwaitClosed returns true at once for a port nothing listens on, false
// after within for a port that stays open, and true soon after a
// listener on the port closes.
func TestAwaitClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	start := time.Now()
	assert.False(t, loopback.AwaitClosed(addr, 100*time.Millisecond), "the port is open")
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "returned before within had passed")

	closed := make(chan bool, 1)
	go func() { closed <- loopback.AwaitClosed(addr, 10*time.Second) }()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-closed:
		t.Fatal("AwaitClosed returned while the port was open")
	default:
	}
	l.Close()
	<-accepted
	select {
	case ok := <-closed:
		assert.True(t, ok, "the port closed")
	case <-time.After(2 * time.Second):
		t.Fatal("AwaitClosed did not return within 2s of the port closing")
	}

	start = time.Now()
	assert.True(t, loopback.AwaitClosed(addr, 0), "nothing listens")
	assert.Less(t, time.Since(start), time.Second)
}
