package slotlimit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
	"github.com/slotlimit/slotlimit/observe"
)

func newLimiterOn(t *testing.T, client redis.UniversalClient, cfg slotlimit.Config) *slotlimit.Limiter {
	t.Helper()
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	return l
}

func acquireAsync(ctx context.Context, l *slotlimit.Limiter, holder string, n int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := l.AcquireN(ctx, holder, n)
		done <- err
	}()
	return done
}

func requireDone(t *testing.T, done <-chan error, within time.Duration, msg string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err, msg)
	case <-time.After(within):
		t.Fatalf("%s: not done within %v", msg, within)
	}
}

// A waiter sleeps until a release, not polling: with a lease a minute long
// it tries on entry, until its subscription is confirmed, and then only a
// third of EntryTTL after its last try, to keep its place; a release
// wakes it at once. Its tries are logged by the time they were sent, so
// that a busy machine's slow confirmation does not count as polling.
func TestAcquireWakesOnReleaseWithoutPolling(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key := testKey(t, b)
		holder := newLimiter(t, b, key, 1, time.Minute)
		_, err := holder.TryAcquire(ctx, "d1")
		require.NoError(t, err)

		client := newClient(t, b)
		tries := &tryLog{holders: []string{"d2"}, sent: map[string][]time.Time{}}
		client.AddHook(tries.hook())
		waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		done := acquireAsync(ctx, waiter, "d2", 1)
		// A poller would have tried ten times or more in that time.
		require.Eventually(t, func() bool { return tries.allSleeping([]string{"d2"}) }, 20*time.Second, 10*time.Millisecond,
			"the waiter sleeps between tries while the slot stays taken")

		released := time.Now()
		err = holder.Release(ctx, "d1")
		require.NoError(t, err)
		requireDone(t, done, 10*time.Second, "waiter after the release")
		assert.LessOrEqual(t, tries.early([]string{"d2"}, released), 1, "tries woken by the release")
		assert.Equal(t, []string{"d2"}, holderIDs(t, holder))
	})
}

// A notice is a hint. When none comes, here because the slot is freed
// behind the library's back, the waiter still wakes at the earliest
// lease's deadline, and only then.
func TestWaiterRecoversLostNoticeAtDeadline(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		key := testKey(t, b)
		const ttl = 600 * time.Millisecond
		holder := newLimiter(t, b, key, 1, ttl)
		_, err := holder.TryAcquire(ctx, "d1")
		require.NoError(t, err)

		client, tries := countedClient(t, b)
		waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		done := acquireAsync(ctx, waiter, "d2", 1)
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, b.Client.ZRem(ctx, key, "d1").Err()) // freed, with no notice

		requireDone(t, done, 3*time.Second, "waiter at the deadline")
		assert.LessOrEqual(t, tries.get("acquire"), int64(3), "it slept until the deadline")
		assert.Equal(t, []string{"d2"}, holderIDs(t, holder))
	})
}

// A release of one unit wakes one of many waiters, not all of them. Each
// waiter's tries are logged by the time they were sent. Once its
// subscription is confirmed a waiter tries again only a third of
// EntryTTL after its last try, to keep its place; before, it polls. So
// the test releases once every waiter has shown such a gap, and a try
// that comes sooner after the waiter's last one than that is a wake: at
// most the woken waiter's may come.
func TestNoticeWakesOnlyAsManyAsFreed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		key := testKey(t, b)
		holder := newLimiter(t, b, key, 1, time.Minute)
		_, err := holder.TryAcquire(ctx, "d1")
		require.NoError(t, err)

		const waiters = 8
		names := make([]string, waiters)
		for i := range names {
			names[i] = fmt.Sprintf("waiter-%d", i)
		}
		client := newClient(t, b)
		tries := &tryLog{holders: names, sent: map[string][]time.Time{}}
		client.AddHook(tries.hook())
		waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
		done := make(chan error, waiters)
		for _, name := range names {
			go func() {
				_, err := waiter.Acquire(ctx, name)
				done <- err
			}()
		}
		require.Eventually(t, func() bool { return tries.allSleeping(names) }, 20*time.Second, 10*time.Millisecond,
			"every waiter sleeps between tries as a confirmed subscription lets it")

		released := time.Now()
		err = holder.Release(ctx, "d1")
		require.NoError(t, err)
		requireDone(t, done, 10*time.Second, "one waiter")
		time.Sleep(200 * time.Millisecond) // time for a herd to show
		woken := tries.early(names, released)
		assert.LessOrEqual(t, woken, 2, "tries after one release, sooner than a sleeping waiter's own")
		n, err := holder.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
		cancel()
		for i := 0; i < waiters-1; i++ {
			<-done
		}
	})
}

// sleepGap is the least time between two tries of a waiter whose
// subscription is confirmed, when no notice wakes it and no lease it
// waits behind lapses sooner.
const sleepGap = waitqueue.EntryTTL / 3

// A tryLog logs when each acquire try of its holders was sent.
type tryLog struct {
	holders []string
	mu      sync.Mutex
	sent    map[string][]time.Time
}

func (l *tryLog) hook() hook {
	return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		at := time.Now()
		err := next(ctx, cmd)
		if scriptOp(cmd) != "acquire" || !ran(err) {
			return err
		}
		// A try of many waiters, coalesced, is a try of each.
		for _, arg := range cmd.Args() {
			if s, ok := arg.(string); ok && slices.Contains(l.holders, s) {
				l.mu.Lock()
				l.sent[s] = append(l.sent[s], at)
				l.mu.Unlock()
			}
		}
		return err
	}
}

// allSleeping reports whether each of holders has had two tries in a row
// at least sleepGap apart.
func (l *tryLog) allSleeping(holders []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range holders {
		sent, slept := l.sent[h], false
		for i := 1; i < len(sent) && !slept; i++ {
			slept = sent[i].Sub(sent[i-1]) >= sleepGap
		}
		if !slept {
			return false
		}
	}
	return true
}

// early counts the tries of holders sent from since on that came sooner
// than sleepGap after the holder's try before.
func (l *tryLog) early(holders []string, since time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, h := range holders {
		sent := l.sent[h]
		for i := 1; i < len(sent); i++ {
			if !sent[i].Before(since) && sent[i].Sub(sent[i-1]) < sleepGap {
				n++
			}
		}
	}
	return n
}

// Releases and waiters racing: each waiter gets the slot released just as
// it begins to wait.
func TestWaiterGetsSlotReleasedAsItWaits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l := newLimiter(t, b, testKey(t, b), 1, time.Minute)
		for i := 0; i < 30; i++ {
			_, err := l.TryAcquire(ctx, "holder")
			require.NoError(t, err)
			done := acquireAsync(ctx, l, "waiter", 1)
			time.Sleep(time.Duration(i%4) * time.Millisecond)
			err = l.Release(ctx, "holder")
			require.NoError(t, err)
			requireDone(t, done, 2*time.Second, "round")
			err = l.Release(ctx, "waiter")
			require.NoError(t, err)
		}
	})
}

func TestAcquireCancelWhileWaitingLeavesNothing(t *testing.T) {
	for _, fair := range []bool{false, true} {
		t.Run(fmt.Sprintf("fair=%v", fair), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, b *backend) {
				key := testKey(t, b)
				l := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute, Fair: fair})
				_, err := l.TryAcquire(context.Background(), "d1")
				require.NoError(t, err)

				ctx, cancel := context.WithCancel(context.Background())
				done := acquireAsync(ctx, l, "d2", 1)
				time.Sleep(150 * time.Millisecond)
				cancel()
				select {
				case err := <-done:
					require.ErrorIs(t, err, context.Canceled)
				case <-time.After(2 * time.Second):
					t.Fatal("Acquire did not return after cancel")
				}
				assert.Equal(t, []string{"d1"}, holderIDs(t, l))
				if fair {
					// The waiter left the queue: a newcomer is not behind it.
					err = l.Release(context.Background(), "d1")
					require.NoError(t, err)
					res, err := l.TryAcquire(context.Background(), "d3")
					require.NoError(t, err)
					assert.True(t, res.Acquired, "no queue entry left behind")
				}
			})
		})
	}
}

// A Limiter built with a new Limit on the same key applies it at once; a
// lower limit evicts no one, it only refuses until the count drops below it.
func TestLimitChangeTakesEffectAtNextCall(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		three := newLimiter(t, b, key, 3, time.Minute)
		for _, h := range []string{"d1", "d2", "d3"} {
			res, err := three.TryAcquire(ctx, h)
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}

		two := newLimiter(t, b, key, 2, time.Minute)
		res, err := two.TryAcquire(ctx, "d4")
		require.NoError(t, err)
		assert.False(t, res.Acquired)
		assert.Equal(t, int64(3), res.Count, "no holder was evicted")
		res, err = two.TryAcquire(ctx, "d1")
		require.NoError(t, err)
		assert.True(t, res.Acquired, "a holder keeps its lease over the new limit")

		err = two.Release(ctx, "d1")
		require.NoError(t, err)
		res, err = two.TryAcquire(ctx, "d4")
		require.NoError(t, err)
		assert.False(t, res.Acquired, "2 of 2 in use")
		err = two.Release(ctx, "d2")
		require.NoError(t, err)
		res, err = two.TryAcquire(ctx, "d4")
		require.NoError(t, err)
		assert.True(t, res.Acquired)

		five := newLimiter(t, b, key, 5, time.Minute)
		for _, h := range []string{"d5", "d6", "d7"} {
			res, err = five.TryAcquire(ctx, h)
			require.NoError(t, err)
			assert.True(t, res.Acquired, h)
		}
		assert.Equal(t, int64(5), res.Count)
	})
}

// A release hands its units to a waiter with a short claim deadline, and
// the waiter's Acquire returns on the notice, with no call on its path,
// stating its full TTL from the release; the claim that follows moves the
// lease in Redis to exactly that deadline.
//
// A try of the waiter's own that is on the wire while the release runs,
// or sent before the notice is read (the waiter tries every second, and
// more often until it reads its subscription's confirmation, which a busy
// machine can make it do late), rightly takes the units itself. Such a
// run shows nothing of the notice, so the scenario runs until no try of
// the waiter's overlaps the hand-off, at most a few times.
func TestHandedLeaseReturnsOnTheNotice(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		for attempt := 1; attempt <= 5; attempt++ {
			if handedLeaseReturnsOnTheNotice(t, b) {
				return
			}
			t.Logf("attempt %d: a try of the waiter's own overlapped the hand-off", attempt)
		}
		t.Fatal("a try of the waiter's own overlapped the hand-off in 5 attempts")
	})
}

// handedLeaseReturnsOnTheNotice runs the scenario once, and reports
// whether no try of the waiter's was sent or answered from the release on
// until its Acquire returned: the case it checks.
func handedLeaseReturnsOnTheNotice(t *testing.T, b *backend) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := testKey(t, b)
	holder := newLimiter(t, b, key, 1, time.Minute)
	client, tries := countedClient(t, b)
	var releasing atomic.Bool
	var overlapping atomic.Int64 // the waiter's tries sent or answered since the release began
	client.AddHook(hook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if scriptOp(cmd) != "acquire" {
			return next(ctx, cmd)
		}
		late := releasing.Load()
		err := next(ctx, cmd)
		if late || releasing.Load() {
			overlapping.Add(1)
		}
		return err
	}))
	rec := &observetest.Recorder{}
	waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: time.Hour, Observer: rec})

	_, err := holder.TryAcquire(ctx, "holder")
	require.NoError(t, err)
	got := make(chan slotlimit.Result, 1)
	go func() {
		res, err := waiter.Acquire(ctx, "waiter")
		assert.NoError(t, err)
		got <- res
	}()
	awaitQueued(t, b, key, 1)
	awaitSubscribed(t, b, key)
	// The waiter tries once more when its process reads the subscription's
	// confirmation; wait for that, most times, before releasing.
	for acquires, settled := tries.get("acquire"), false; !settled; {
		time.Sleep(100 * time.Millisecond)
		now := tries.get("acquire")
		settled, acquires = now == acquires, now
	}
	releasing.Store(true)
	err = holder.Release(ctx, "holder")
	require.NoError(t, err)
	res := <-got
	require.True(t, res.Acquired)
	if overlapping.Load() > 0 {
		return false
	}
	assert.Contains(t, observetest.Kinds(rec.Take()), observe.HandedOver, "handed over, not taken by a try")
	now := b.Now()
	assert.WithinDuration(t, now.Add(time.Hour), res.ExpiresAt, 5*time.Second, "the full TTL")
	// The claim follows the return, off the waiter's path, and moves
	// the lease to the deadline the waiter was told.
	assert.Eventually(t, func() bool {
		hs, err := holder.Holders(ctx)
		return err == nil && len(hs) == 1 && hs[0].ExpiresAt.Equal(res.ExpiresAt) && tries.get("claim") == 1
	}, 5*time.Second, 5*time.Millisecond, "one call claims it, as Redis then holds it")
	assert.Equal(t, int64(1), tries.get("claim"), "one call claims it")
	assert.Zero(t, tries.get("renew"))
	return true
}

// A waiter whose lease time is shorter than the time since its last try
// still returns on the notice of a release that hands it units: its try
// read the server's clock, so it knows that the units must still be held
// for it, and needs no second try.
func TestShortLeaseHandedLongAfterTheTryReturnsOnTheNotice(t *testing.T) {
	b := newRealRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := testKey(t, b)
	holder := newLimiter(t, b, key, 1, time.Minute)
	client, tries := countedClient(t, b)
	const ttl = 250 * time.Millisecond
	waiter := newLimiterOn(t, client, slotlimit.Config{Key: key, Limit: 1, TTL: ttl})

	_, err := holder.TryAcquire(ctx, "holder")
	require.NoError(t, err)
	got := make(chan slotlimit.Result, 1)
	go func() {
		res, err := waiter.Acquire(ctx, "waiter")
		assert.NoError(t, err)
		got <- res
	}()
	awaitQueued(t, b, key, 1)
	awaitSubscribed(t, b, key)
	acquires := tries.get("acquire")
	for settled := false; !settled; {
		time.Sleep(100 * time.Millisecond)
		now := tries.get("acquire")
		settled, acquires = now == acquires, now
	}
	// The waiter tries again a second after its last try; hand it the
	// unit well past its lease time after that try, before the next.
	time.Sleep(ttl + 100*time.Millisecond)
	err = holder.Release(ctx, "holder")
	require.NoError(t, err)
	res := <-got
	require.True(t, res.Acquired)
	assert.Equal(t, acquires, tries.get("acquire"), "handed over, not taken by a try")
}

// A Ring client waits on notices like any other.
func TestRingClientWaits(t *testing.T) {
	b := newMiniredis(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"one": b.Opts.Addrs[0]}})
	t.Cleanup(func() { ring.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := testKey(t, b)
	l := newLimiterOn(t, ring, slotlimit.Config{Key: key, Limit: 1, TTL: time.Minute})
	_, err := l.Acquire(ctx, "first")
	require.NoError(t, err)
	done := acquireAsync(ctx, l, "second", 1)
	awaitQueued(t, b, key, 1)
	err = l.Release(ctx, "first")
	require.NoError(t, err)
	requireDone(t, done, 3*time.Second, "second")
	assert.Equal(t, []string{"second"}, holderIDs(t, l))
}

// A release hands units to a waiter only within the waiter's own limit:
// while processes with different limits share a key, as during a rolling
// change, a waiter on the lower limit is never admitted above it.
func TestHandOffRespectsWaitersLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		ten := newLimiter(t, b, key, 10, time.Minute)
		two := newLimiter(t, b, key, 2, time.Minute)
		for i := range 5 {
			res, err := ten.TryAcquire(ctx, fmt.Sprintf("b%d", i))
			require.NoError(t, err)
			require.True(t, res.Acquired)
		}

		type outcome struct {
			res slotlimit.Result
			err error
		}
		got := make(chan outcome, 1)
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		go func() {
			res, err := two.Acquire(wctx, "a1")
			got <- outcome{res, err}
		}()
		require.Eventually(t, func() bool {
			n, err := b.Client.Exists(ctx, "{"+key+"}/q").Result()
			return err == nil && n == 1
		}, 5*time.Second, 5*time.Millisecond, "a1 queues")

		// Releases by the limit-10 process bring the count to 4, 3 and 2:
		// each frees a unit by its limit, none by a1's.
		for i := range 3 {
			err := ten.Release(ctx, fmt.Sprintf("b%d", i))
			require.NoError(t, err)
			select {
			case o := <-got:
				t.Fatalf("a1 admitted with Count %d, above its limit 2 (err %v)", o.res.Count, o.err)
			case <-time.After(150 * time.Millisecond):
			}
		}
		err := ten.Release(ctx, "b3")
		require.NoError(t, err)
		select {
		case o := <-got:
			require.NoError(t, o.err)
			assert.True(t, o.res.Acquired)
			assert.Equal(t, int64(2), o.res.Count, "b4 and a1")
			assert.Equal(t, int64(2), o.res.Limit)
		case <-time.After(5 * time.Second):
			t.Fatal("a1 was not admitted once the count was below its limit")
		}
		n, err := ten.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
	})
}
