package slotlimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A notice counts only for the queue entry it names, whether it comes
// before or after the try that names the entry, and only while the lease
// it hands over must still be live.
func TestHandedNoticeMatchesQueueEntry(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := New(client, Config{Key: "slotlimit-handoff-test", Limit: 1})
	require.NoError(t, err)
	lease := Result{Acquired: true, Count: 1, ExpiresAt: time.UnixMilli(1_000)}
	woken := func(h *handoff) bool {
		select {
		case <-h.Wake():
			return true
		default:
			return false
		}
	}
	// hand publishes a notice that a release handed lease to holder's
	// entry arrival, and waits until it has reached h.
	hand := func(h *handoff, arrival int64) {
		t.Helper()
		payload := fmt.Sprintf("+%d:%d:%d:holder", lease.ExpiresAt.UnixMilli(), lease.Count, arrival)
		require.NoError(t, client.Publish(ctx, l.channel, payload).Err())
		for last, _ := h.Last(); last != payload; last, _ = h.Last() {
			require.NoError(t, ctx.Err(), "the notice did not arrive")
			time.Sleep(time.Millisecond)
		}
	}

	steps := []struct {
		name        string
		notice      int64 // queue entry the notice names
		entry       int64 // queue entry the waiter's try returned
		sentAgo     time.Duration
		noticeFirst bool
		handed      bool
	}{
		{"matching notice", 5, 5, 0, false, true},
		{"notice first", 5, 5, 0, true, true},
		{"stale notice from an earlier wait", 4, 5, 0, false, false},
		{"stale notice before the try", 4, 5, 0, true, false},
		{"waiter not queued yet", 5, 0, 0, true, false},
		{"too late to trust", 5, 5, queueTTL, false, false},
	}
	// Settle the subscription first: its confirmation wakes every waiter.
	settled := l.join("other")
	defer settled.Leave()
	for !settled.Ready() {
		require.NoError(t, ctx.Err(), "not subscribed")
		time.Sleep(time.Millisecond)
	}
	for i, s := range steps {
		h := l.join("holder")
		if s.noticeFirst {
			hand(h, s.notice)
			h.queued(s.entry, time.Now().Add(-s.sentAgo))
		} else {
			h.queued(s.entry, time.Now().Add(-s.sentAgo))
			hand(h, s.notice)
		}
		got, ok := h.handedLease()
		assert.Equal(t, s.handed, ok, "step %d: %s", i, s.name)
		// A notice for the waiter's entry wakes it even when too late to
		// trust: the waiter then checks with a try.
		assert.Equal(t, s.entry != 0 && s.notice == s.entry, woken(h), "step %d: %s: woken", i, s.name)
		if ok {
			assert.Equal(t, lease, got, "step %d", i)
		}
		h.Leave()
	}
}

func TestParseHanded(t *testing.T) {
	holder, arrival, res, ok := parseHanded("+1700000000123:7:42:dev:ice\n1")
	assert.True(t, ok)
	assert.Equal(t, "dev:ice\n1", holder)
	assert.Equal(t, int64(42), arrival)
	assert.Equal(t, int64(7), res.Count)
	assert.Equal(t, int64(1700000000123), res.ExpiresAt.UnixMilli())
	for _, bad := range []string{"", "7", "+", "+1:2", "+1:2:x:h", "-1:2:3:h", "+a:2:3:h"} {
		_, _, _, ok := parseHanded(bad)
		assert.False(t, ok, "%q", bad)
	}
}
