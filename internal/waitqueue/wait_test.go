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

const channel = "{waitqueue-test}/free"

// subscribed returns a notice site on a miniredis whose channel's
// subscription is confirmed (its confirmation wakes every waiter, so it
// comes first), and a context that bounds the test.
func subscribed(t *testing.T) (context.Context, *redis.Client, *notice.Site) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	site := notice.NewRegistry().Site(client)
	settled := waitqueue.Join(site, channel, "other")
	t.Cleanup(settled.Leave)
	for !settled.Ready() {
		require.NoError(t, ctx.Err(), "not subscribed")
		time.Sleep(time.Millisecond)
	}
	return ctx, client, site
}

// A notice counts only for the queue entry it names, whether it comes
// before or after the try that names the entry, and only while what it
// hands over must still be held.
func TestHandedNoticeMatchesQueueEntry(t *testing.T) {
	ctx, client, site := subscribed(t)
	// The hand-off holds what it hands over for the claim time.
	const handedAt = 1_000_000 // the server's clock at the hand-off, ms
	heldUntil := handedAt + waitqueue.EntryTTL.Milliseconds() - 1
	deadline, value := time.UnixMilli(handedAt+60_000), int64(7)
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
		payload := fmt.Sprintf("*%d:%d:%d:%d:%d:holder", handedAt, heldUntil, deadline.UnixMilli(), value, arrival)
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
	for i, s := range steps {
		w := waitqueue.Join(site, channel, "holder")
		try := waitqueue.Try{Arrival: s.entry}
		if s.noticeFirst {
			hand(w, s.notice)
			w.QueuedTry(try, time.Now().Add(-s.sentAgo))
		} else {
			w.QueuedTry(try, time.Now().Add(-s.sentAgo))
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

// A notice that states how long what it hands over is held is trusted
// only while it must still be held, by the server's clock: the hand-off
// ran after the waiter's last try was sent, so the server's clock is now
// at most the try's clock (or the hand-off's, when the try did not read
// it) plus the time since the try was sent.
func TestHandedNoticeTrustedUntilHeldUntil(t *testing.T) {
	ctx, client, site := subscribed(t)
	const handedAt = 1_000_000 // the server's clock at the hand-off, ms
	steps := []struct {
		name    string
		held    int64         // ms the hand-off holds the lock for the waiter
		sentAgo time.Duration // since the waiter's last try was sent
		clock   int64         // the try's server clock, ms before the hand-off; -1: not read
		trusted bool
	}{
		{"read at once", 300, 0, -1, true},
		{"stopped past the hold", 300, 450 * time.Millisecond, -1, false},
		{"stopped past the hold, the try's clock read", 300, 450 * time.Millisecond, 0, false},
		{"try long before the hand-off, its clock read", 300, 450 * time.Millisecond, 400, true},
		{"try long before the hand-off, its clock not read", 300, 450 * time.Millisecond, -1, false},
		{"claim time", 3000, 2 * time.Second, -1, true},
	}
	for i, s := range steps {
		w := waitqueue.Join(site, channel, "holder")
		payload := fmt.Sprintf("*%d:%d:%d:7:5:holder", handedAt, handedAt+s.held, handedAt+60_000)
		require.NoError(t, client.Publish(ctx, channel, payload).Err())
		for last, _ := w.Last(); last != payload; last, _ = w.Last() {
			require.NoError(t, ctx.Err(), "the notice did not arrive")
			time.Sleep(time.Millisecond)
		}
		try := waitqueue.Try{Arrival: 5}
		if s.clock >= 0 {
			try.Clock = time.UnixMilli(handedAt - s.clock)
		}
		w.QueuedTry(try, time.Now().Add(-s.sentAgo))
		h, ok := w.Handed()
		assert.Equal(t, s.trusted, ok, "step %d: %s", i, s.name)
		assert.Equal(t, int64(7), h.Value, "step %d", i)
		assert.True(t, h.Deadline.Equal(time.UnixMilli(handedAt+60_000)), "step %d", i)
		assert.True(t, h.HeldUntil.Equal(time.UnixMilli(handedAt+s.held)), "step %d", i)
		w.Leave()
	}
}

func TestNoticeName(t *testing.T) {
	name, ok := waitqueue.Name("*1700000000123:1700000000423:1700000030123:7:42:dev:ice\n1")
	assert.True(t, ok)
	assert.Equal(t, "dev:ice\n1", name)
	for _, bad := range []string{"", "7", "*", "*1:2", "-1:2:3:4:5:h", "*a:2:3:4:5:h", "*1:2:3:4:h", "*1:2:3:4:x:h",
		// the form of earlier versions, which said nothing of how long it held
		"+1700000000123:7:42:h"} {
		_, ok := waitqueue.Name(bad)
		assert.False(t, ok, "%q", bad)
	}
}
