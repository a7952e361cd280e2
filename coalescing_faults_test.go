package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// wordHold holds a client's script calls whose arguments hold one of its
// words, until that word is let go; other script calls pass.
type wordHold struct {
	mu      sync.Mutex
	held    map[string]chan struct{}
	entered chan string
}

func newWordHold(words ...string) *wordHold {
	h := &wordHold{held: map[string]chan struct{}{}, entered: make(chan string, 100)}
	for _, w := range words {
		h.held[w] = make(chan struct{})
	}
	return h
}

func (h *wordHold) let(w string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch := h.held[w]; ch != nil {
		close(ch)
		delete(h.held, w)
	}
}

// hold holds w's calls from now on.
func (h *wordHold) hold(w string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held[w] = make(chan struct{})
}

// requireNothingHeld fails the test if a call reaches h within a while: a
// check that a call is not sent, which a loaded machine can only pass.
func requireNothingHeld(t *testing.T, h *wordHold, what string) {
	t.Helper()
	select {
	case w := <-h.entered:
		t.Fatalf("%s was sent (%q)", what, w)
	case <-time.After(100 * time.Millisecond):
	}
}

func (h *wordHold) await(t *testing.T, w string) {
	t.Helper()
	select {
	case got := <-h.entered:
		require.Equal(t, w, got)
	case <-time.After(30 * time.Second):
		t.Fatalf("no call with %q held", w)
	}
}

func (h *wordHold) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *wordHold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.wait(cmds...)
		return next(ctx, cmds)
	}
}
func (h *wordHold) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := strings.ToLower(cmd.Name()); n == "evalsha" || n == "eval" {
			h.wait(cmd)
		}
		return next(ctx, cmd)
	}
}

// wait holds the caller while one of cmds' arguments is a held word.
func (h *wordHold) wait(cmds ...redis.Cmder) {
	h.mu.Lock()
	var word string
	var ch chan struct{}
	for _, cmd := range cmds {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && h.held[s] != nil {
				word, ch = s, h.held[s]
			}
		}
	}
	h.mu.Unlock()
	if ch != nil {
		h.entered <- word
		<-ch
	}
}

// A ctx whose Err turns to Canceled between two reads, as a deadline's
// timer can fire between them.
type flakyCtx struct {
	context.Context
	armed atomic.Bool
	reads atomic.Int32
}

func (c *flakyCtx) Err() error {
	if c.armed.Load() && c.reads.Add(1) > 1 {
		return context.Canceled
	}
	return nil
}

func holdLimiter(t *testing.T, cfg slotlimit.Config, words ...string) (*slotlimit.Limiter, *slotlimit.Limiter, *wordHold) {
	b := newRealRedis(t)
	client := newClient(t, b)
	cfg.Key = testKey(t, b)
	other, err := slotlimit.New(b.Client, cfg)
	require.NoError(t, err)
	warmUp(t, other)
	h := newWordHold(words...)
	client.AddHook(h)
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, w := range words {
			h.let(w)
		}
	})
	return l, other, h
}

// A queued call named to send the next batch whose ctx ends as it takes
// the batch (between two reads of ctx.Err) leaves, and the batch goes
// without it: its other member gets its answer.
func TestALeaderWhoseCtxEndsAsItTakesItsBatchStrandsNoOne(t *testing.T) {
	l, _, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead")
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	fc := &flakyCtx{Context: ctx}
	leader := goTry(fc, l, "leader")
	waitQueued(t, l, 1, 1)
	mctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	member := goTry(mctx, l, "member")
	waitQueued(t, l, 1, 2)
	fc.armed.Store(true)
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	t.Logf("leader: %+v", <-leader)
	select {
	case o := <-member:
		require.NoError(t, o.err, "member returned only when its own ctx ended")
	case <-time.After(25 * time.Second):
		t.Fatal("member never returned")
	}
}

// The same with the leader alone: the batch is empty, and nothing is
// sent, nor does anything panic.
func TestALeaderWhoseCtxEndsAsItTakesAnEmptyBatchSendsNothing(t *testing.T) {
	l, _, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead")
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	fc := &flakyCtx{Context: ctx}
	leader := goTry(fc, l, "leader")
	waitQueued(t, l, 1, 1)
	fc.armed.Store(true)
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	t.Logf("leader: %+v", <-leader)
	time.Sleep(500 * time.Millisecond) // the batch goroutine runs
}

// A TryAcquireLease cut short while its batch is in flight releases its
// holder after the batch has run, so that the batch cannot take a slot,
// for the whole TTL, for a holder whose ID no one knows.
func TestATryAcquireLeaseCutShortInFlightHoldsNothing(t *testing.T) {
	l, other, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead", "stays")
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	cctx, cancel := context.WithCancel(ctx)
	type leaseOutcome struct {
		lease *slotlimit.Lease
		err   error
	}
	leased := make(chan leaseOutcome, 1)
	go func() {
		x, err := l.TryAcquireLease(cctx, 1)
		leased <- leaseOutcome{x, err}
	}()
	waitQueued(t, l, 1, 1)
	stays := goTry(ctx, l, "stays")
	waitQueued(t, l, 1, 2)
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	h.await(t, "stays") // the batch of the lease's try and stays
	cancel()
	h.let("stays")
	got := <-leased
	if got.lease != nil {
		// The batch's answer reached the call as its ctx ended, and was
		// taken: the caller holds the lease it was given, and frees it.
		t.Log("the batch's answer came first: a lease, released here")
		require.NoError(t, got.lease.Release(ctx))
	} else {
		require.ErrorIs(t, got.err, slotlimit.ErrOutcomeUnknown) // and it released its holder
	}
	require.True(t, (<-stays).res.Acquired)
	ids := holderIDs(t, other)
	assert.ElementsMatch(t, []string{"lead", "stays"}, ids, "a failed TryAcquireLease holds nothing")
}

// The same for a waiting Acquire: "On failure holder holds nothing".
func TestAnAcquireCutShortInFlightHoldsNothing(t *testing.T) {
	l, other, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead", "stays")
	ctx := context.Background()
	acq := func(ctx context.Context, holder string) chan error {
		ch := make(chan error, 1)
		go func() { _, err := l.Acquire(ctx, holder); ch <- err }()
		return ch
	}
	lead := acq(ctx, "lead")
	h.await(t, "lead")
	cctx, cancel := context.WithCancel(ctx)
	cut := acq(cctx, "cut")
	waitJoins(t, l, 1)
	stays := acq(ctx, "stays")
	waitJoins(t, l, 2)
	h.let("lead")
	require.NoError(t, <-lead)
	h.await(t, "stays")
	h.hold("cut") // from now on, cut's calls: its release
	cancel()
	requireNothingHeld(t, h, "cut's release, before its batch ran")
	h.let("stays")
	h.await(t, "cut")
	h.let("cut")
	err := <-cut
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, <-stays)
	assert.ElementsMatch(t, []string{"lead", "stays"}, holderIDs(t, other), "a failed Acquire holds nothing")
}

func waitJoins(t *testing.T, l *slotlimit.Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for slotlimit.QueuedJoins(l, 1) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d joins queued, want %d", slotlimit.QueuedJoins(l, 1), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// CountRefusals counts each refusal of a batch once.
func TestRefusalsOfABatchCountedExactly(t *testing.T) {
	for _, fair := range []bool{false, true} {
		for _, n := range []int64{1, 2} {
			t.Run(fmt.Sprintf("fair=%v n=%d", fair, n), func(t *testing.T) {
				l, other, h := holdLimiter(t, slotlimit.Config{Limit: 2, TTL: time.Minute, Fair: fair, CountRefusals: true}, "lead")
				ctx := context.Background()
				_, err := other.TryAcquireN(ctx, "owner", 2)
				require.NoError(t, err)
				lead := make(chan error, 1)
				go func() { _, err := l.TryAcquireN(ctx, "lead", n); lead <- err }()
				h.await(t, "lead")
				var outs []chan error
				for i := range 5 {
					ch := make(chan error, 1)
					go func() {
						res, err := l.TryAcquireN(ctx, fmt.Sprint("r", i), n)
						if err == nil && res.Acquired {
							err = errors.New("granted")
						}
						ch <- err
					}()
					outs = append(outs, ch)
					waitQueued(t, l, n, i+1)
				}
				h.let("lead")
				require.NoError(t, <-lead)
				for _, ch := range outs {
					require.NoError(t, <-ch)
				}
				got, err := other.Refusals(ctx)
				require.NoError(t, err)
				assert.Equal(t, int64(6), got)
			})
		}
	}
}

// Renewals of a lapsed lease and of a live one in one batch.
func TestRenewalsLapsedAndLiveInABatch(t *testing.T) {
	b := newRealRedis(t)
	client := newClient(t, b)
	key := testKey(t, b)
	short, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 5, TTL: 50 * time.Millisecond})
	require.NoError(t, err)
	h := newWordHold("lead")
	client.AddHook(h)
	t.Cleanup(func() { h.let("lead") })
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 5, TTL: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	plain, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 5, TTL: time.Minute})
	require.NoError(t, err)
	for _, x := range []string{"lead", "live"} {
		_, err := plain.TryAcquire(ctx, x)
		require.NoError(t, err)
	}
	res, err := short.TryAcquire(ctx, "lapsed")
	require.NoError(t, err)
	waitServerPast(t, b, res.ExpiresAt.Add(5*time.Millisecond), 10*time.Second)
	lead := make(chan error, 1)
	go func() { lead <- l.Renew(ctx, "lead") }()
	h.await(t, "lead")
	errs := make([]chan error, 3)
	for i, x := range []string{"lapsed", "live", "never"} {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- l.Renew(ctx, x) }()
		deadline := time.Now().Add(30 * time.Second)
		for slotlimit.QueuedRenewals(l) < i+1 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	h.let("lead")
	require.NoError(t, <-lead)
	assert.ErrorIs(t, <-errs[0], slotlimit.ErrNotHeld)
	assert.NoError(t, <-errs[1])
	assert.ErrorIs(t, <-errs[2], slotlimit.ErrNotHeld)
	assert.ElementsMatch(t, []string{"lead", "live"}, holderIDs(t, l))
}

// A batch of releases, Lease.Release and plain, whose reply is lost, with
// and without a waiter (release.lua's fast and slow paths).
func TestAResentBatchOfMixedReleasesAnswersAsItsFirstRun(t *testing.T) {
	for _, waiter := range []bool{false, true} {
		t.Run(fmt.Sprintf("waiter=%v", waiter), func(t *testing.T) {
			b := newRealRedis(t)
			key := testKey(t, b)
			client, cutter := b.CutClient(t)
			cfg := slotlimit.Config{Key: key, Limit: 8, TTL: time.Minute}
			other, err := slotlimit.New(b.Client, cfg)
			require.NoError(t, err)
			warmUp(t, other)
			h := newWordHold("lead")
			client.AddHook(h)
			t.Cleanup(func() { h.let("lead") })
			l, err := slotlimit.New(client, cfg)
			require.NoError(t, err)
			ctx := context.Background()
			for _, p := range []string{"lead", "p1", "p2"} {
				_, err := other.TryAcquire(ctx, p)
				require.NoError(t, err)
			}
			x1, err := l.TryAcquireLease(ctx, 1)
			require.NoError(t, err)
			x2, err := l.TryAcquireLease(ctx, 1)
			require.NoError(t, err)
			wctx, wcancel := context.WithCancel(ctx)
			defer wcancel()
			if waiter {
				_, err := other.TryAcquireN(ctx, "fill", 3)
				require.NoError(t, err)
				go func() { _, _ = other.AcquireN(wctx, "w", 8) }()
				waitQueuedOnServer(t, other, 1)
			}
			lead := make(chan error, 1)
			go func() { lead <- l.Release(ctx, "lead") }()
			h.await(t, "lead")
			calls := []func() error{
				func() error { return x1.Release(ctx) },
				func() error { return l.Release(ctx, "p1") },
				func() error { return l.Release(ctx, "never") },
				func() error { return x2.Release(ctx) },
				func() error { return l.Release(ctx, "p2") },
			}
			outs := make([]chan error, len(calls))
			for i, f := range calls {
				outs[i] = make(chan error, 1)
				go func() { outs[i] <- f() }()
				waitQueued(t, l, 0, i+1)
			}
			cutter.Arm(1, "evalsha", key, "p1")
			h.let("lead")
			require.NoError(t, <-lead)
			got := make([]error, len(outs))
			for i, ch := range outs {
				got[i] = <-ch
			}
			t.Logf("cuts %d; answers %v", cutter.Cuts(), got)
			assert.NoError(t, got[0], "Lease.Release")
			assert.NoError(t, got[3], "Lease.Release")
			assert.ErrorIs(t, got[2], slotlimit.ErrNotHeld)
			for _, i := range []int{1, 4} {
				if got[i] != nil {
					assert.ErrorIs(t, got[i], slotlimit.ErrNotHeld, "plain Release re-sent")
				}
			}
		})
	}
}

// With Replicas, a batch's members return once the replica has their
// writes.
func TestAReplicatedBatchReturnsOnceTheReplicaHasIt(t *testing.T) {
	r := redistest.StartReplicated(t)
	h := newWordHold("lead")
	r.Client.AddHook(h)
	t.Cleanup(func() { h.let("lead") })
	cfg := slotlimit.Config{Key: "review-replicated", Limit: 3, TTL: time.Minute, Replicas: 1, ReplicaTimeout: 5 * time.Second}
	l, err := slotlimit.New(r.Client, cfg)
	require.NoError(t, err)
	onReplica, err := slotlimit.New(r.ReplicaClient, cfg)
	require.NoError(t, err)
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	var rest []chan tryOutcome
	for i := range 4 {
		rest = append(rest, goTry(ctx, l, fmt.Sprint("h", i)))
		waitQueued(t, l, 1, i+1)
	}
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	granted := 0
	for _, ch := range rest {
		o := <-ch
		require.NoError(t, o.err)
		if o.res.Acquired {
			granted++
		}
	}
	assert.Equal(t, 2, granted)
	n, err := onReplica.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "the replica has the batch's writes")
	// Releases and renewals in batches.
	var wg sync.WaitGroup
	for _, x := range []string{"lead", "h0", "h1", "h2", "h3"} {
		wg.Add(2)
		go func() { defer wg.Done(); _ = l.Renew(ctx, x) }()
		go func() { defer wg.Done(); _ = l.Release(ctx, x) }()
	}
	wg.Wait()
	n, err = onReplica.Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
}

// Fair mode, a long queue whose first waiter wants more than is free: a
// batch of 63 TryAcquires, each of which must mind the whole queue, reads
// the queue once, so that it holds the server about as long as one try.
func TestAFairBatchReadsTheQueueOnce(t *testing.T) {
	s := redistest.StartServer(t)
	rc := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { rc.Close() })
	ctx := context.Background()
	key := "coalescing-fair-cost"
	cfg := slotlimit.Config{Key: key, Limit: 10, TTL: time.Minute, Fair: true}
	other, err := slotlimit.New(rc, cfg)
	require.NoError(t, err)
	res, err := other.TryAcquire(ctx, "owner")
	require.NoError(t, err)
	require.True(t, res.Acquired)
	now := time.Now().UnixMilli()
	q, qd, qw := "{"+key+"}/q", "{"+key+"}/qd", "{"+key+"}/qw"
	pipe := rc.Pipeline()
	for i := range 1000 {
		w, want := fmt.Sprint("w", i), "1:60000:10"
		if i == 0 {
			want = "10:60000:10"
		}
		pipe.ZAdd(ctx, q, redis.Z{Score: float64(i + 1), Member: w})
		pipe.ZAdd(ctx, qd, redis.Z{Score: float64(now + 600000), Member: w})
		pipe.HSet(ctx, qw, w, want)
	}
	pipe.HSet(ctx, qw, "", 1000)
	_, err = pipe.Exec(ctx)
	require.NoError(t, err)

	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	h := newWordHold("lead")
	client.AddHook(h)
	t.Cleanup(func() { h.let("lead") })
	l, err := slotlimit.New(client, cfg)
	require.NoError(t, err)
	_, err = other.TryAcquire(ctx, "warm") // loads the script
	require.NoError(t, err)
	require.NoError(t, rc.ConfigResetStat(ctx).Err())
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	var rest []chan tryOutcome
	for i := range 63 {
		rest = append(rest, goTry(ctx, l, fmt.Sprint("t", i)))
		waitQueued(t, l, 1, i+1)
	}
	h.let("lead")
	require.False(t, (<-lead).res.Acquired)
	for _, ch := range rest {
		require.False(t, (<-ch).res.Acquired)
	}
	// The work, not the time, which a loaded machine stretches: the lead's
	// call reads the 1000 wants once (one HMGET), and the batch of 63 once
	// more, not once per try.
	stats, err := rc.Info(ctx, "commandstats").Result()
	require.NoError(t, err)
	reads := 0
	for line := range strings.SplitSeq(stats, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_hmget:calls="); ok {
			reads, err = strconv.Atoi(v[:strings.IndexByte(v, ',')])
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 2, reads, "HMGETs of the queue's wants: one for the lone call, one for the batch")
}

// A TryAcquire cut short in flight, then a Release of its holder: the
// Release waits for the try's batch, so that it frees what the batch took.
func TestAReleaseAfterAnUnknownTryGoesAfterItsBatch(t *testing.T) {
	l, other, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead", "stays")
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	cctx, cancel := context.WithCancel(ctx)
	cut := goTry(cctx, l, "cut")
	waitQueued(t, l, 1, 1)
	stays := goTry(ctx, l, "stays")
	waitQueued(t, l, 1, 2)
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	h.await(t, "stays")
	cancel()
	require.ErrorIs(t, (<-cut).err, slotlimit.ErrOutcomeUnknown)
	h.hold("cut")
	released := make(chan error, 1)
	go func() { released <- l.Release(ctx, "cut") }()
	requireNothingHeld(t, h, "the Release, before the try's batch ran")
	h.let("stays")
	h.await(t, "cut")
	h.let("cut")
	require.NoError(t, <-released, "the Release freed what the try's batch took")
	require.True(t, (<-stays).res.Acquired)
	assert.NotContains(t, holderIDs(t, other), "cut", "released after its try, yet it holds a slot")
}

// Every method with DisableCoalescing, on a real Redis, with and without
// Fair and CountRefusals, nothing panics and each answers as it should.
func TestDisableCoalescingEveryMethod(t *testing.T) {
	b := newRealRedis(t)
	for _, fair := range []bool{false, true} {
		t.Run(fmt.Sprint("fair=", fair), func(t *testing.T) {
			l, err := slotlimit.New(newClient(t, b), slotlimit.Config{Key: testKey(t, b), Limit: 3, TTL: time.Minute, Fair: fair, CountRefusals: true, DisableCoalescing: true})
			require.NoError(t, err)
			ctx := context.Background()
			assert.NotPanics(t, func() {
				res, err := l.TryAcquire(ctx, "a")
				require.NoError(t, err)
				assert.True(t, res.Acquired)
				res, err = l.TryAcquireN(ctx, "b", 2)
				require.NoError(t, err)
				assert.True(t, res.Acquired)
				res, err = l.TryAcquire(ctx, "c")
				require.NoError(t, err)
				assert.False(t, res.Acquired)
				require.NoError(t, l.Renew(ctx, "a"))
				assert.ErrorIs(t, l.Renew(ctx, "c"), slotlimit.ErrNotHeld)
				require.NoError(t, l.Release(ctx, "b"))
				assert.ErrorIs(t, l.Release(ctx, "b"), slotlimit.ErrNotHeld)
				res, err = l.AcquireN(ctx, "d", 2)
				require.NoError(t, err)
				assert.True(t, res.Acquired)
				go func() { time.Sleep(50 * time.Millisecond); _ = l.Release(ctx, "d") }()
				res, err = l.Acquire(ctx, "e")
				require.NoError(t, err)
				assert.True(t, res.Acquired)
				require.NoError(t, l.Release(ctx, "e"))
				x, err := l.TryAcquireLease(ctx, 1)
				require.NoError(t, err)
				require.NoError(t, x.Renew(ctx))
				require.NoError(t, x.Release(ctx))
				assert.ErrorIs(t, x.Release(ctx), slotlimit.ErrNotHeld)
				x, err = l.AcquireLease(ctx, 1)
				require.NoError(t, err)
				_ = x.KeepAlive(ctx)
				require.NoError(t, x.Release(ctx))
				require.NoError(t, l.Do(ctx, 1, func(context.Context) error { return nil }))
				rs, err := l.TryAcquireBatch(ctx, []string{"f", "g"})
				require.NoError(t, err)
				assert.Len(t, rs, 2)
				bs, err := l.ReleaseBatch(ctx, []string{"f", "g", "a"})
				require.NoError(t, err)
				assert.Equal(t, []bool{true, true, true}, bs)
				n, err := l.Count(ctx)
				require.NoError(t, err)
				assert.Zero(t, n)
				_, err = l.Holders(ctx)
				require.NoError(t, err)
				_, err = l.Inspect(ctx)
				require.NoError(t, err)
				r, err := l.Refusals(ctx)
				require.NoError(t, err)
				assert.Equal(t, int64(1), r)
			})
		})
	}
}

// A queued call that ends up alone in its batch returns when its ctx ends
// in flight, as every member of a batch does.
func TestAQueuedCallAloneInItsBatchReturnsAtCtxEnd(t *testing.T) {
	l, _, h := holdLimiter(t, slotlimit.Config{Limit: 10, TTL: time.Minute}, "lead", "alone")
	ctx := context.Background()
	lead := goTry(ctx, l, "lead")
	h.await(t, "lead")
	cctx, cancel := context.WithCancel(ctx)
	alone := goTry(cctx, l, "alone")
	waitQueued(t, l, 1, 1)
	h.let("lead")
	require.True(t, (<-lead).res.Acquired)
	h.await(t, "alone") // in flight, as a batch of one
	cancel()
	select {
	case o := <-alone:
		assert.ErrorIs(t, o.err, slotlimit.ErrOutcomeUnknown)
	case <-time.After(10 * time.Second):
		t.Error("a call whose ctx ended while its batch was in flight did not return at once")
		h.let("alone")
		<-alone
	}
}

// In fair mode, a batch of tries minds the waiters queued ahead as the same
// tries made one by one do: on the same state, the batch and single calls
// answer alike.
func TestAFairBatchAnswersAsTriesInTurn(t *testing.T) {
	b := newRealRedis(t)
	ctx := context.Background()
	run := func(off bool) []slotlimit.Result {
		key := testKey(t, b)
		cfg := slotlimit.Config{Key: key, Limit: 6, TTL: time.Minute, Fair: true, DisableCoalescing: off}
		other, err := slotlimit.New(b.Client, cfg)
		require.NoError(t, err)
		_, err = other.TryAcquireN(ctx, "owner", 2)
		require.NoError(t, err)
		// Three waiters queued ahead, wanting 1, 2 and 1 units.
		now := time.Now().UnixMilli()
		q, qd, qw := "{"+key+"}/q", "{"+key+"}/qd", "{"+key+"}/qw"
		for i, want := range []string{"1:60000:6", "2:60000:6", "1:60000:6"} {
			w := fmt.Sprint("w", i)
			require.NoError(t, b.Client.ZAdd(ctx, q, redis.Z{Score: float64(i + 1), Member: w}).Err())
			require.NoError(t, b.Client.ZAdd(ctx, qd, redis.Z{Score: float64(now + 600000), Member: w}).Err())
			require.NoError(t, b.Client.HSet(ctx, qw, w, want).Err())
		}
		require.NoError(t, b.Client.HSet(ctx, qw, "", 3).Err())
		client := newClient(t, b)
		h := newWordHold("lead")
		client.AddHook(h)
		t.Cleanup(func() { h.let("lead") })
		l, err := slotlimit.New(client, cfg)
		require.NoError(t, err)
		var results []slotlimit.Result
		if off {
			for _, holder := range []string{"lead", "a", "b", "w1", "c"} {
				if holder == "lead" {
					h.let("lead")
				}
				res, err := l.TryAcquire(ctx, holder)
				require.NoError(t, err)
				results = append(results, res)
			}
			return results
		}
		lead := goTry(ctx, l, "lead")
		h.await(t, "lead")
		var rest []chan tryOutcome
		for i, holder := range []string{"a", "b", "w1", "c"} {
			rest = append(rest, goTry(ctx, l, holder))
			waitQueued(t, l, 1, i+1)
		}
		h.let("lead")
		o := <-lead
		require.NoError(t, o.err)
		results = append(results, o.res)
		for _, ch := range rest {
			o := <-ch
			require.NoError(t, o.err)
			results = append(results, o.res)
		}
		return results
	}
	alone, batched := run(true), run(false)
	for i := range alone {
		alone[i].ExpiresAt, batched[i].ExpiresAt = time.Time{}, time.Time{}
		alone[i].EarliestLapse, batched[i].EarliestLapse = 0, 0
	}
	assert.Equal(t, alone, batched)
	granted := 0
	for _, r := range alone {
		if r.Acquired {
			granted++
		}
	}
	// 4 units free, the waiters ahead want 4: the newcomers lead, a and b
	// are refused; w1, queued behind 1 unit, is granted and leaves the
	// queue; then the queue wants 2 of the 3 left, and c is granted.
	assert.Equal(t, 2, granted, "%+v", alone)
	assert.True(t, alone[3].Acquired && alone[4].Acquired, "%+v", alone)
}

// A batch of tries that the free units cover, with a renewal and a holder
// named twice, answers as the same tries made one by one.
func TestABatchOfNewHoldersRenewalsAndRepeatsAnswersAsTriesInTurn(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		holders := []string{"a", "old", "b", "a", "c"}
		run := func(batch bool) []slotlimit.Result {
			l := newLimiter(t, b, testKey(t, b), 10, time.Minute)
			_, err := l.TryAcquire(ctx, "old")
			require.NoError(t, err)
			var results []slotlimit.Result
			if batch {
				results, err = l.TryAcquireBatch(ctx, holders)
				require.NoError(t, err)
			} else {
				for _, h := range holders {
					res, err := l.TryAcquire(ctx, h)
					require.NoError(t, err)
					results = append(results, res)
				}
			}
			for i := range results {
				results[i].ExpiresAt = time.Time{}
			}
			return results
		}
		alone, batched := run(false), run(true)
		assert.Equal(t, alone, batched)
		var counts []int64
		for _, r := range batched {
			require.True(t, r.Acquired)
			counts = append(counts, r.Count)
		}
		assert.Equal(t, []int64{2, 2, 3, 3, 4}, counts)
	})
}
