package slotlimit_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// A Redis that takes connections and never answers (a hung server): each
// call fails, and a settings record, written "at most once a minute",
// costs a call no command more. The record's SET is sent once, not before
// every call, so that each call waits out one command's timeout, not two.
func TestRecordNotSentBeforeEveryCallToAHungRedis(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	client := redis.NewClient(&redis.Options{Addr: l.Addr().String(), MaxRetries: -1,
		ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, DisableIdentity: true, Protocol: 2})
	t.Cleanup(func() { client.Close() })
	h := &recordSets{}
	client.AddHook(h)

	lim, err := slotlimit.New(client, slotlimit.Config{Key: "review:down", Limit: 3, DisableCoalescing: true})
	require.NoError(t, err)
	const calls = 5
	for range calls {
		_, err := lim.TryAcquire(context.Background(), "h1")
		require.Error(t, err)
	}
	assert.LessOrEqual(t, h.count(), 1, "record SETs sent before %d failed calls", calls)
}
