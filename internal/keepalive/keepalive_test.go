package keepalive_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/keepalive"
)

var errLost = errors.New("lost")

const ttl = 300 * time.Millisecond

// A server is a fake lease on a server: Renew answers with renew, Release
// frees it, and both are counted.
type server struct {
	mu       sync.Mutex
	renewals int
	releases int
	renew    func(ctx context.Context) (bool, error)
	release  func(ctx context.Context) (bool, error)
}

func (s *server) lease() *keepalive.Lease {
	return keepalive.New(keepalive.Config{
		TTL:     ttl,
		Renew:   s.counted(&s.renewals, &s.renew),
		Release: s.counted(&s.releases, &s.release),
		ErrLost: errLost,
	})
}

// counted returns a call that counts itself in n and answers as *call
// does, or true when that is nil.
func (s *server) counted(n *int, call *func(context.Context) (bool, error)) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		s.mu.Lock()
		*n++
		answer := *call
		s.mu.Unlock()
		if answer == nil {
			return true, nil
		}
		return answer(ctx)
	}
}

func (s *server) counts() (renewals, releases int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewals, s.releases
}

func lost(x *keepalive.Lease) bool {
	select {
	case <-x.Lost():
		return true
	default:
		return false
	}
}

// KeepAlive renews every third of the TTL, and Release stops it, cancels
// the work without ErrLost and never makes the lease lost.
func TestKeepAliveRenewsUntilReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s server
		x := s.lease()
		x.Taken(time.Now())
		work := x.KeepAlive(context.Background())
		assert.Equal(t, work, x.KeepAlive(context.Background()), "one keep-alive per lease")

		time.Sleep(ttl + ttl/6)
		renewals, _ := s.counts()
		assert.Equal(t, 3, renewals, "renewed every TTL/3")

		ok, err := x.Release(context.Background())
		require.NoError(t, err)
		assert.True(t, ok)
		synctest.Wait()
		assert.ErrorIs(t, work.Err(), context.Canceled)
		assert.NotErrorIs(t, context.Cause(work), errLost)
		time.Sleep(ttl)
		after, releases := s.counts()
		assert.Equal(t, renewals, after, "no renewal after Release")
		assert.Equal(t, 1, releases)
		assert.False(t, lost(x), "a released lease is not lost")
	})
}

// A renewal that finds the lease gone makes it lost, and the work ends
// with cause ErrLost.
func TestKeepAliveLostWhenGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server{renew: func(context.Context) (bool, error) { return false, nil }}
		x := s.lease()
		x.Taken(time.Now())
		work := x.KeepAlive(context.Background())
		<-work.Done()
		assert.ErrorIs(t, context.Cause(work), errLost)
		assert.True(t, lost(x))
	})
}

// Renewals that fail make the lease lost once its deadline has passed on
// the local clock, and not before.
func TestKeepAliveLostWhenRenewalsFailPastDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := server{renew: func(context.Context) (bool, error) { return false, errors.New("timeout") }}
		x := s.lease()
		start := time.Now()
		x.Taken(start)
		work := x.KeepAlive(context.Background())
		<-x.Lost()
		assert.GreaterOrEqual(t, time.Since(start), ttl)
		assert.Less(t, time.Since(start), ttl+ttl/10+time.Millisecond, "retried every TTL/10")
		<-work.Done()
		assert.ErrorIs(t, context.Cause(work), errLost)
	})
}

// A Lease whose deadline is unknown is renewed at once, and failing
// renewals never make it lost until a renewal has set its deadline.
func TestKeepAliveLearnsUnknownDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s server
		x := s.lease()
		x.KeepAlive(context.Background())
		synctest.Wait()
		renewals, _ := s.counts()
		assert.Equal(t, 1, renewals, "renewed at once")
		x.Release(context.Background())
	})
	synctest.Test(t, func(t *testing.T) {
		s := server{renew: func(context.Context) (bool, error) { return false, errors.New("timeout") }}
		x := s.lease()
		x.KeepAlive(context.Background())
		time.Sleep(3 * ttl)
		assert.False(t, lost(x), "no deadline, no loss")
		x.Release(context.Background())
	})
}

// Release cuts a renewal in flight short and frees the lease only after
// it has returned, so that no renewal races the release.
func TestReleaseWaitsForRenewalInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var renewing sync.Mutex
		inFlight := false
		s := server{
			renew: func(ctx context.Context) (bool, error) {
				renewing.Lock()
				inFlight = true
				renewing.Unlock()
				<-ctx.Done()
				renewing.Lock()
				inFlight = false
				renewing.Unlock()
				return false, ctx.Err()
			},
		}
		s.release = func(context.Context) (bool, error) {
			renewing.Lock()
			defer renewing.Unlock()
			assert.False(t, inFlight, "a renewal raced the release")
			return true, nil
		}
		x := s.lease()
		x.KeepAlive(context.Background()) // unknown deadline: renews at once
		synctest.Wait()
		ok, err := x.Release(context.Background())
		require.NoError(t, err)
		assert.True(t, ok)
		assert.False(t, lost(x))
	})
}

// A failed Release can be tried again; one that succeeded is not repeated,
// and KeepAlive after Release returns a context ended with ErrLost.
func TestReleaseRetriesUntilItSucceeds(t *testing.T) {
	var s server
	s.release = func(context.Context) (bool, error) { return false, errors.New("timeout") }
	x := s.lease()
	_, err := x.Release(context.Background())
	require.Error(t, err)
	s.mu.Lock()
	s.release = nil
	s.mu.Unlock()
	ok, err := x.Release(context.Background())
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = x.Release(context.Background())
	require.NoError(t, err)
	assert.False(t, ok, "released already")
	_, releases := s.counts()
	assert.Equal(t, 2, releases)

	work := x.KeepAlive(context.Background())
	assert.ErrorIs(t, context.Cause(work), errLost)
}

// Renew reports a gone lease as lost, unless it was released.
func TestRenew(t *testing.T) {
	s := server{renew: func(context.Context) (bool, error) { return false, nil }}
	x := s.lease()
	ok, err := x.Renew(context.Background())
	require.NoError(t, err)
	assert.False(t, ok)
	assert.True(t, lost(x))

	released := s.lease()
	released.Release(context.Background())
	ok, err = released.Renew(context.Background())
	require.NoError(t, err)
	assert.False(t, ok)
	assert.False(t, lost(released), "a released lease is never lost")
}

func TestNilLeaseIsLost(t *testing.T) {
	var x *keepalive.Lease
	assert.True(t, lost(x))
	work := keepalive.Cancelled(context.Background(), errLost)
	assert.ErrorIs(t, context.Cause(work), errLost)
}

// OnLost is called once, however often the lease is lost, and before
// Lost's channel closes.
func TestOnLostOnceBeforeLostCloses(t *testing.T) {
	var calls atomic.Int64
	var x *keepalive.Lease
	x = keepalive.New(keepalive.Config{TTL: time.Minute, ErrLost: errLost, OnLost: func(context.Context) {
		select {
		case <-x.Lost():
			t.Error("Lost closed before OnLost")
		default:
		}
		calls.Add(1)
	}})
	x.Lose()
	x.Lose()
	<-x.Lost()
	assert.Equal(t, int64(1), calls.Load())
}
