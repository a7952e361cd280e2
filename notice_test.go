package slotlimit

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// A notice counts only for the queue entry it names, whether it comes
// before or after the try that names the entry, and only while the lease
// it hands over must still be live.
func TestHandedNoticeMatchesQueueEntry(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	hubs.mu.Lock()
	h := newHub(client)
	hubs.mu.Unlock()
	lease := Result{Acquired: true, Count: 1, ExpiresAt: time.UnixMilli(1_000)}
	woken := func(w *waiter) bool {
		select {
		case <-w.wake:
			return true
		default:
			return false
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
	settled := h.join("ch", "other")
	defer h.leave(settled)
	for !h.ready(settled) {
		time.Sleep(time.Millisecond)
	}
	for i, s := range steps {
		w := h.join("ch", "holder")
		if s.noticeFirst {
			h.hand("ch", "holder", s.notice, lease)
			h.queued(w, s.entry, time.Now().Add(-s.sentAgo))
		} else {
			h.queued(w, s.entry, time.Now().Add(-s.sentAgo))
			h.hand("ch", "holder", s.notice, lease)
		}
		got, ok := h.handedLease(w)
		assert.Equal(t, s.handed, ok, "step %d: %s", i, s.name)
		// A notice for the waiter's entry wakes it even when too late to
		// trust: the waiter then checks with a try.
		assert.Equal(t, s.entry != 0 && s.notice == s.entry, woken(w), "step %d: %s: woken", i, s.name)
		if ok {
			assert.Equal(t, lease, got, "step %d", i)
		}
		h.leave(w)
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
