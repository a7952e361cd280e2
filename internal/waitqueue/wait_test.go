package waitqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A notice counts only for the queue entry it names, whether it comes
// before or after the try that names the entry, and only while what it
// hands over must still be held.
func TestHandedNoticeMatchesQueueEntry(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	site := notice.NewRegistry().Site(client)
	const channel = "{waitqueue-test}/free"
	deadline, value := time.UnixMilli(1_000), int64(7)
	woken := func(w *waitqueue.Wait) bool {
		select {
		case <-w.Wake():
			return true
		default:
			return false
		}
	}
	// hand publishes a notice that a release handed to holder's entry
	// arrival, and waits until it has reached w.
	hand := func(w *waitqueue.Wait, arrival int64) {
		t.Helper()
		payload := fmt.Sprintf("+%d:%d:%d:holder", deadline.UnixMilli(), value, arrival)
		require.NoError(t, client.Publish(ctx, channel, payload).Err())
		for last, _ := w.Last(); last != payload; last, _ = w.Last() {
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
		{"too late to trust", 5, 5, waitqueue.EntryTTL, false, false},
	}
	// Settle the subscription first: its confirmation wakes every waiter.
	settled := waitqueue.Join(site, channel, "other")
	defer settled.Leave()
	for !settled.Ready() {
		require.NoError(t, ctx.Err(), "not subscribed")
		time.Sleep(time.Millisecond)
	}
	for i, s := range steps {
		w := waitqueue.Join(site, channel, "holder")
		if s.noticeFirst {
			hand(w, s.notice)
			w.Queued(s.entry, time.Now().Add(-s.sentAgo))
		} else {
			w.Queued(s.entry, time.Now().Add(-s.sentAgo))
			hand(w, s.notice)
		}
		got, ok := w.Handed()
		assert.Equal(t, s.handed, ok, "step %d: %s", i, s.name)
		// A notice for the waiter's entry wakes it even when too late to
		// trust: the waiter then checks with a try.
		assert.Equal(t, s.entry != 0 && s.notice == s.entry, woken(w), "step %d: %s: woken", i, s.name)
		if ok {
			assert.True(t, got.Deadline.Equal(deadline), "step %d", i)
			assert.Equal(t, value, got.Value, "step %d", i)
		}
		w.Leave()
	}
}

func TestNoticeName(t *testing.T) {
	name, ok := waitqueue.Name("+1700000000123:7:42:dev:ice\n1")
	assert.True(t, ok)
	assert.Equal(t, "dev:ice\n1", name)
	for _, bad := range []string{"", "7", "+", "+1:2", "+1:2:x:h", "-1:2:3:h", "+a:2:3:h"} {
		_, ok := waitqueue.Name(bad)
		assert.False(t, ok, "%q", bad)
	}
}
