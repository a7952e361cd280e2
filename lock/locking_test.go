package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// A locking is a call of Lock that runs in a goroutine of its own.
type locking struct {
	done chan struct{}
	l    *lock.Lock
	err  error
}

// startLock calls m.Lock(ctx) in a goroutine of its own, and waits until
// the lock's queue holds queued waiters, this one among them.
func startLock(t *testing.T, ctx context.Context, b *redistest.Backend, m *lock.Mutex, queued int64) *locking {
	t.Helper()
	c := &locking{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.l, c.err = m.Lock(ctx)
	}()
	queue := lock.SideKey(m.Config().Key, "q")
	require.Eventually(t, func() bool { return b.Client.ZCard(ctx, queue).Val() == queued }, 5*time.Second, time.Millisecond, "%d waiters queue", queued)
	return c
}

var errStillWaiting = errors.New("the Lock has not returned")

// result waits up to within for the call to return, and returns what it
// returned, or errStillWaiting.
func (c *locking) result(within time.Duration) (*lock.Lock, error) {
	select {
	case <-c.done:
		return c.l, c.err
	case <-time.After(within):
		return nil, errStillWaiting
	}
}
