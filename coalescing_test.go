package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// Concurrent calls of one kind on one key share one script call. These
// tests line calls up behind one held at a Gate, so that they go as one
// batch, and check that each caller gets what its call alone would.

// waitQueued waits until n calls of l are queued behind a batch in flight
// (n units each, or releases with units 0).
func waitQueued(t *testing.T, l *slotlimit.Limiter, units int64, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for slotlimit.Queued(l, units) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", slotlimit.Queued(l, units), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// scriptCalls counts the script calls a client sends, and keeps their
// arguments.
type scriptCalls struct {
	n    atomic.Int64
	mu   sync.Mutex
	args [][]any
}

func (c *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" || cmd.Name() == "eval" {
			c.n.Add(1)
			c.mu.Lock()
			c.args = append(c.args, cmd.Args())
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// together reports whether one script call carried every one of words.
func (c *scriptCalls) together(words ...string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, args := range c.args {
		found := 0
		for _, w := range words {
			for _, a := range args {
				if a == w {
					found++
					break
				}
			}
		}
		if found == len(words) {
			return true
		}
	}
	return false
}
func (c *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

type tryOutcome struct {
	holder string
	res    slotlimit.Result
	err    error
}

func goTry(ctx context.Context, l *slotlimit.Limiter, holder string) chan tryOutcome {
	ch := make(chan tryOutcome, 1)
	go func() {
		res, err := l.TryAcquire(ctx, holder)
		ch <- tryOutcome{holder, res, err}
	}()
	return ch
}

func TestCoalescedCallsNeverOverAdmit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		for _, off := range []bool{false, true} {
			t.Run(fmt.Sprintf("DisableCoalescing=%v", off), func(t *testing.T) {
				calls := &scriptCalls{}
				client := newClient(t, b)
				client.AddHook(calls)
				const limit, callers = 20, 120
				l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: limit, TTL: time.Minute, DisableCoalescing: off})
				require.NoError(t, err)
				ctx := context.Background()
				var granted atomic.Int64
				var wg sync.WaitGroup
				for i := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := l.TryAcquire(ctx, fmt.Sprint("h", i))
						assert.NoError(t, err)
						if res.Acquired {
							granted.Add(1)
							assert.LessOrEqual(t, res.Count, int64(limit))
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int64(limit), granted.Load(), "every free slot taken, and no more")
				n, err := l.Count(ctx)
				require.NoError(t, err)
				assert.Equal(t, int64(limit), n)

				var released atomic.Int64
				for i := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := l.Release(ctx, fmt.Sprint("h", i))
						if err == nil {
							released.Add(1)
						} else {
							assert.ErrorIs(t, err, slotlimit.ErrNotHeld)
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int64(limit), released.Load(), "each lease released once")
				n, err = l.Count(ctx)
				require.NoError(t, err)
				assert.Zero(t, n)
				if off && b.Name != "cluster" {
					// The count reads with a script of its own. (A Cluster's
					// nodes each load the scripts at their first call.)
					assert.Equal(t, int64(2*callers+2), calls.n.Load(), "each call its own script call")
				}
			})
		}
	})
}

func TestCallsQueuedBehindOneInFlightShareOneScriptCall(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	calls := &scriptCalls{}
	client.AddHook(calls)
	l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: 4, TTL: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = l.Count(ctx) // loads nothing the tries need, but dials
	require.NoError(t, err)
	gate := redistest.HoldScripts(t, client)
	calls.n.Store(0)

	first := goTry(ctx, l, "first")
	gate.Entered(t)
	var rest []chan tryOutcome
	for i := range 6 {
		rest = append(rest, goTry(ctx, l, fmt.Sprint("h", i)))
		waitQueued(t, l, 1, i+1)
	}
	gate.Open()
	require.True(t, (<-first).res.Acquired)
	got := map[string]bool{}
	for _, ch := range rest {
		o := <-ch
		require.NoError(t, o.err)
		got[o.holder] = o.res.Acquired
	}
	// The batch takes its holders in turn: the first three fill the limit.
	assert.Equal(t, map[string]bool{"h0": true, "h1": true, "h2": true, "h3": false, "h4": false, "h5": false}, got)
	assert.Equal(t, int64(2), calls.n.Load(), "the six queued tries went as one script call")
}

func TestALostReplyOfABatchAnswersEachAsItsFirstRun(t *testing.T) {
	b := newRealRedis(t)
	key := testKey(t, b)
	client, cutter := b.CutClient(t)
	cfg := slotlimit.Config{Key: key, Limit: 20, TTL: time.Minute}
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	other, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	warmUp(t, other)
	ctx := context.Background()

	t.Run("tries", func(t *testing.T) {
		gate := redistest.HoldScripts(t, client)
		first := goTry(ctx, l, "first")
		gate.Entered(t)
		var rest []chan tryOutcome
		for i := range 5 {
			rest = append(rest, goTry(ctx, l, fmt.Sprint("t", i)))
			waitQueued(t, l, 1, i+1)
		}
		gate.Pass()
		require.True(t, (<-first).res.Acquired)
		gate.Entered(t) // the batch
		cutOnce(cutter, key)
		gate.Open() // for the batch and its try after the lost reply
		for _, ch := range rest {
			o := <-ch
			require.NoError(t, o.err)
			assert.True(t, o.res.Acquired, o.holder)
			assert.Equal(t, int64(1), o.res.Weight, o.holder)
		}
		requireCut(t, cutter, 1)
		n, err := other.Count(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(6), n, "each holder's unit taken once")
	})

	t.Run("releases of leases", func(t *testing.T) {
		gate := redistest.HoldScripts(t, client)
		leases := make([]*slotlimit.Lease, 6)
		for i := range leases {
			gate.Pass()
			x, err := l.TryAcquireLease(ctx, 1)
			require.NoError(t, err)
			gate.Entered(t) // its own call, let through
			leases[i] = x
		}
		done := make([]chan error, len(leases))
		for i, x := range leases {
			done[i] = make(chan error, 1)
			go func() { done[i] <- x.Release(ctx) }()
			if i == 0 {
				gate.Entered(t)
			} else {
				waitQueued(t, l, 0, i)
			}
		}
		gate.Pass()
		require.NoError(t, <-done[0])
		gate.Entered(t) // the batch
		cutOnce(cutter, key)
		gate.Open() // for the batch and its try after the lost reply
		for i, ch := range done[1:] {
			assert.NoError(t, <-ch, "lease %d: its release's re-sent run answered as its first", i+1)
		}
		requireCut(t, cutter, 2) // the tries' cut, and this one
	})
}

func TestACallWhoseContextEndsWhileQueuedIsNotSent(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: 10, TTL: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	gate := redistest.HoldScripts(t, client)

	first := goTry(ctx, l, "first")
	gate.Entered(t)
	cctx, cancel := context.WithCancel(ctx)
	gone := goTry(cctx, l, "gone")
	waitQueued(t, l, 1, 1)
	stays := goTry(ctx, l, "stays")
	waitQueued(t, l, 1, 2)
	cancel()
	o := <-gone
	require.ErrorIs(t, o.err, context.Canceled)
	assert.False(t, errors.Is(o.err, slotlimit.ErrOutcomeUnknown), "a call that left its queue was never sent: %v", o.err)
	gate.Open()
	require.True(t, (<-first).res.Acquired)
	require.True(t, (<-stays).res.Acquired)
	holders, err := l.Holders(ctx)
	require.NoError(t, err)
	for _, h := range holders {
		assert.NotEqual(t, "gone", h.ID, "a call whose ctx ended while queued took a slot")
	}
	assert.Len(t, holders, 2)
}

func TestACallWhoseContextEndsInFlightIsOutcomeUnknown(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: 10, TTL: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	gate := redistest.HoldScripts(t, client)

	first := goTry(ctx, l, "first")
	gate.Entered(t)
	cctx, cancel := context.WithCancel(ctx)
	cut := goTry(cctx, l, "cut")
	waitQueued(t, l, 1, 1)
	stays := goTry(ctx, l, "stays")
	waitQueued(t, l, 1, 2)
	gate.Pass()
	require.True(t, (<-first).res.Acquired)
	gate.Entered(t) // the batch of cut and stays
	cancel()
	o := <-cut
	require.ErrorIs(t, o.err, context.Canceled)
	require.ErrorIs(t, o.err, slotlimit.ErrOutcomeUnknown)
	gate.Open()
	require.True(t, (<-stays).res.Acquired)
	// The batch ran: the call cut short took its slot, and calling again
	// with the same arguments takes it once.
	res, err := l.TryAcquire(ctx, "cut")
	require.NoError(t, err)
	require.True(t, res.Acquired)
	n, err := l.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
}

func TestARenewalCutShortInItsBatchCanBeSentAgain(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	l, err := slotlimit.New(client, slotlimit.Config{Key: testKey(t, b), Limit: 10, TTL: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.TryAcquire(ctx, "held")
	require.NoError(t, err)
	require.True(t, res.Acquired)
	gate := redistest.HoldScripts(t, client)

	// A lease's renewal cut short in flight: the lease stays held, as a
	// single renewal cut short leaves it.
	first := make(chan error, 1)
	go func() { first <- l.Renew(ctx, "held") }()
	gate.Entered(t)
	cctx, cancel := context.WithCancel(ctx)
	cut, stays := make(chan error, 1), make(chan error, 1)
	for i, c := range []context.Context{cctx, ctx} {
		go func() { []chan error{cut, stays}[i] <- l.Renew(c, "held") }()
		deadline := time.Now().Add(30 * time.Second)
		for slotlimit.QueuedRenewals(l) < i+1 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		require.Equal(t, i+1, slotlimit.QueuedRenewals(l))
	}
	gate.Pass()
	require.NoError(t, <-first)
	gate.Entered(t) // the batch of both
	cancel()
	require.ErrorIs(t, <-cut, slotlimit.ErrOutcomeUnknown)
	gate.Open()
	require.NoError(t, <-stays)
	require.NoError(t, l.Renew(ctx, "held"), "a renewal whose outcome is unknown is called again as it was")
}

func TestWaitingAcquiresShareTriesAndKeepArrivalOrder(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	calls := &scriptCalls{}
	client.AddHook(calls)
	cfg := slotlimit.Config{Key: testKey(t, b), Limit: 1, TTL: time.Minute, Fair: true}
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	looker, err := slotlimit.New(b.Client, cfg) // reads through a client of its own
	require.NoError(t, err)
	ctx := context.Background()
	_, err = l.TryAcquire(ctx, "owner")
	require.NoError(t, err)
	gate := redistest.HoldScripts(t, client)
	calls.n.Store(0)

	got := make(chan string, 3)
	acquire := func(holder string) {
		res, err := l.Acquire(ctx, holder)
		if assert.NoError(t, err, holder) && assert.True(t, res.Acquired, holder) {
			got <- holder
		}
	}
	go acquire("a")
	gate.Entered(t)
	for i, holder := range []string{"b", "c"} {
		go acquire(holder)
		deadline := time.Now().Add(30 * time.Second)
		for slotlimit.QueuedJoins(l, 1) < i+1 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		require.Equal(t, i+1, slotlimit.QueuedJoins(l, 1))
	}
	gate.Open()
	waitQueuedOnServer(t, looker, 3)
	assert.True(t, calls.together("b", "c"), "b's and c's tries went as one script call")

	// Each release hands the slot to the next in arrival order.
	prev := "owner"
	for _, want := range []string{"a", "b", "c"} {
		require.NoError(t, l.Release(ctx, prev))
		select {
		case holder := <-got:
			require.Equal(t, want, holder)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s was not handed the slot", want)
		}
		prev = want
	}
}

// waitQueuedOnServer waits until n waiters are queued in Redis.
func waitQueuedOnServer(t *testing.T, l *slotlimit.Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, err := l.Inspect(context.Background())
		require.NoError(t, err)
		if len(snap.Queue) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters queued, want %d", len(snap.Queue), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestACrowdOfWaitingAcquiresNeverOverAdmits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		const limit, callers = 3, 30
		l, err := slotlimit.New(newClient(t, b), slotlimit.Config{Key: testKey(t, b), Limit: limit, TTL: time.Minute})
		require.NoError(t, err)
		ctx := context.Background()
		var in, most atomic.Int64
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				holder := fmt.Sprint("w", i)
				res, err := l.Acquire(ctx, holder)
				if !assert.NoError(t, err) || !assert.True(t, res.Acquired) {
					return
				}
				now := in.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				in.Add(-1)
				assert.NoError(t, l.Release(ctx, holder))
			}()
		}
		wg.Wait()
		assert.LessOrEqual(t, most.Load(), int64(limit), "never more holders than the limit")
		n, err := l.Count(ctx)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
}
