package ratelimit_test

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

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// coalesceLimits are the limits the coalescing tests run, each of 10
// events an hour, so that nothing refills while a test runs on a real
// server: GCRA with a share of a period that is a whole µs, GCRA with one
// that is not, and a FixedWindow.
var coalesceLimits = []ratelimit.Limit{
	{Rate: 10, Period: time.Hour},
	{Rate: 7, Period: time.Hour, Burst: 10},
	{Rate: 10, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
}

// waitBound is how long a test waits for an event that comes at once on
// an idle machine: long enough for a loaded one.
const waitBound = 30 * time.Second

// A scriptGate is a go-redis hook on the script calls a client sends on
// one data key. It records each call it sees, the number of calls it
// carries (1 for a single call's script; for a batch's, its last
// argument) with its n and tau (for GCRA) or rate (for a FixedWindow),
// and holds the next ones it is told to hold until released.
type scriptGate struct {
	key     string
	mu      sync.Mutex
	sent    []sentScript
	holds   int
	held    chan int      // the size of each call as it is held
	release chan struct{} // each value lets one held call go on
}

// A sentScript is one script call a scriptGate saw.
type sentScript struct {
	size       int
	n, ceiling any // the call's n, and its tau (GCRA) or rate (FixedWindow)
}

// newScriptGate returns a scriptGate on the data key of limit for key,
// added to client's hooks.
func newScriptGate(client redis.UniversalClient, key string, limit ratelimit.Limit) *scriptGate {
	g := &scriptGate{key: dataKey(key, limit), held: make(chan int, 64), release: make(chan struct{}, 64)}
	client.AddHook(g)
	return g
}

// Hold makes g hold the next n script calls on its key.
func (g *scriptGate) Hold(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holds = n
}

// Held waits for the next call g holds, and returns its size.
func (g *scriptGate) Held(t *testing.T) int {
	t.Helper()
	select {
	case size := <-g.held:
		return size
	case <-time.After(waitBound):
		t.Fatal("no script call was held")
		return 0
	}
}

// Release lets one held call go on.
func (g *scriptGate) Release() { g.release <- struct{}{} }

// Sizes returns the size of each script call seen, in order.
func (g *scriptGate) Sizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	sizes := make([]int, len(g.sent))
	for i, s := range g.sent {
		sizes[i] = s.size
	}
	return sizes
}

// Sent returns the script calls seen, in order.
func (g *scriptGate) Sent() []sentScript {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sent)
}

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() == "evalsha" && len(args) > 6 && args[2] == 2 {
			// The rate record's name, value and expiry, when it is due.
			args = append(args[:4:4], args[5:len(args)-2]...)
		}
		if cmd.Name() == "evalsha" && len(args) > 6 && args[3] == g.key {
			// ARGV begins with the share and tau for GCRA, with the window
			// and rate for a FixedWindow, then n, in every script.
			s := sentScript{size: 1, n: args[6], ceiling: args[5]}
			if slices.Contains(ratelimit.BatchHashes, args[1].(string)) {
				s.size = args[len(args)-1].(int)
			}
			g.mu.Lock()
			g.sent = append(g.sent, s)
			hold := g.holds > 0
			if hold {
				g.holds--
			}
			g.mu.Unlock()
			if hold {
				g.held <- s.size
				<-g.release
			}
		}
		return next(ctx, cmd)
	}
}

func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A lane names the calls that share batches: the AllowN calls of n
// events on key and limit made through l.
type lane struct {
	l     *ratelimit.Limiter
	key   string
	limit ratelimit.Limit
	n     int64
}

// queued returns the calls of ln queued behind the batch in flight.
func (ln lane) queued() int { return ratelimit.Queued(ln.l, ln.key, ln.limit, ln.n) }

// An outcome is one call's answer.
type outcome struct {
	res ratelimit.Result
	err error
}

// startCall makes call in a goroutine of its own and returns the channel
// of its outcome.
func startCall(ctx context.Context, call func(ctx context.Context) (ratelimit.Result, error)) chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := call(ctx)
		ch <- outcome{res, err}
	}()
	return ch
}

// queueCalls starts len(ctxs) calls of ln, call i with ctxs[i], while a
// call of ln is held in flight, and waits until every one has queued
// behind it.
func queueCalls(t *testing.T, ln lane, ctxs []context.Context, call func(ctx context.Context, i int) (ratelimit.Result, error)) []chan outcome {
	t.Helper()
	want := ln.queued() + len(ctxs)
	outs := make([]chan outcome, len(ctxs))
	for i, ctx := range ctxs {
		outs[i] = startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) {
			return call(ctx, i)
		})
	}
	for deadline := time.Now().Add(waitBound); ln.queued() < want; {
		if time.Now().After(deadline) {
			t.Fatalf("the calls did not all queue: %d queued, want %d", ln.queued(), want)
		}
		time.Sleep(time.Millisecond)
	}
	return outs
}

// await returns the outcome on ch, failing t if none comes.
func await(t *testing.T, ch chan outcome) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(waitBound):
		t.Fatal("a call did not return")
		return outcome{}
	}
}

// background returns n background contexts.
func background(n int) []context.Context {
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i] = context.Background()
	}
	return ctxs
}

// loadScripts caches every script the tests watch on client's servers,
// so that each call is one EVALSHA, never a NOSCRIPT and an EVAL.
func loadScripts(t *testing.T, client redis.UniversalClient) {
	t.Helper()
	require.NoError(t, ratelimit.LoadScripts(context.Background(), client))
}

// sortResults sorts results as a run of calls in turn answers them: the
// allowed first, most remaining first, then the refused.
func sortResults(results []ratelimit.Result) {
	slices.SortStableFunc(results, func(a, b ratelimit.Result) int {
		switch {
		case a.Allowed != b.Allowed:
			if a.Allowed {
				return -1
			}
			return 1
		case a.Remaining != b.Remaining:
			return int(b.Remaining - a.Remaining)
		}
		return int(a.RetryAfter - b.RetryAfter)
	})
}

// Concurrent calls on one key and limit, coalesced into a batch, each get
// exactly the answer that the same calls made one after the other get,
// each caller its own, with its own Observer event under its own method's
// name; the batch is one script call that carries them all.
func TestConcurrentCallsAnswerAsInTurn(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		plain, err := ratelimit.New(b.Client, ratelimit.Config{DisableCoalescing: true})
		require.NoError(t, err)
		const calls = 30
		for _, limit := range coalesceLimits {
			key, inTurn := b.Key(t, "rl-test:"), b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit), dataKey(inTurn, limit)) })
			rec := &observetest.Recorder{}
			limiter, err := ratelimit.New(client, ratelimit.Config{Observer: rec})
			require.NoError(t, err)
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)

			// The first call finds nothing in flight and is sent alone;
			// the others queue behind it and go as one batch.
			call := func(ctx context.Context, i int) (ratelimit.Result, error) {
				if i%2 == 0 {
					return limiter.Allow(ctx, key, limit)
				}
				return limiter.AllowN(ctx, key, limit, 1)
			}
			first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return call(ctx, 0) })
			require.Equal(t, 1, gate.Held(t))
			outs := append([]chan outcome{first}, queueCalls(t, lane{limiter, key, limit, 1}, background(calls-1), func(ctx context.Context, i int) (ratelimit.Result, error) {
				return call(ctx, i+1)
			})...)
			gate.Release()

			results := make([]ratelimit.Result, calls)
			for i, out := range outs {
				o := await(t, out)
				require.NoError(t, o.err, "%v: call %d", limit, i)
				results[i] = o.res
			}
			assert.Equal(t, []int{1, calls - 1}, gate.Sizes(), "%v: the first alone, the rest in one batch", limit)

			// The same calls, one after the other, on a key of their own.
			want := make([]ratelimit.Result, calls)
			for i := range want {
				want[i], err = plain.Allow(ctx, inTurn, limit)
				require.NoError(t, err)
			}
			events := rec.Take()
			require.Len(t, events, calls, "%v: one event per call", limit)
			byOp := map[string]int{}
			for _, e := range events {
				byOp[e.Op]++
				assert.Equal(t, key, e.Key)
				assert.Equal(t, int64(1), e.Units)
				assert.Equal(t, int64(10), e.Limit)
				assert.True(t, e.Kind.Final())
			}
			assert.Equal(t, map[string]int{"Allow": calls / 2, "AllowN": calls / 2}, byOp, "%v: each call under its own method", limit)
			inUse := map[int64]int{}
			for _, e := range events {
				inUse[e.InUse]++
			}
			wantInUse := map[int64]int{10: calls - 9}
			for i := int64(1); i < 10; i++ {
				wantInUse[i] = 1
			}
			assert.Equal(t, wantInUse, inUse, "%v: each event's InUse is its own call's", limit)

			sortResults(results)
			sortResults(want)
			if !b.Real {
				// miniredis's clock stands still: every figure agrees.
				assert.Equal(t, want, results, "%v", limit)
				continue
			}
			// A real clock moves between the calls: the decisions and
			// what remains agree, and a refusal waits.
			for i := range want {
				assert.Equal(t, want[i].Allowed, results[i].Allowed, "%v: call %d", limit, i)
				assert.Equal(t, want[i].Remaining, results[i].Remaining, "%v: call %d", limit, i)
				assert.Equal(t, want[i].RetryAfter > 0, results[i].RetryAfter > 0, "%v: call %d", limit, i)
				assert.Positive(t, results[i].ResetAfter, "%v: call %d", limit, i)
			}
		}
	})
}

// Many callers on one key, free to meet in batches of any size, with two
// n: what they are allowed is exactly what is counted, and never beyond
// the limit.
func TestManyCallersCountExactly(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		limiter, plain := newLimiter(t, b.Client), newLimiter(t, b.Client)
		for _, limit := range []ratelimit.Limit{
			{Rate: 100, Period: time.Hour},
			{Rate: 100, Period: time.Hour, Algorithm: ratelimit.FixedWindow},
		} {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit)) })
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for w := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 5 {
						n := int64(1 + (w+i)%2)
						res, err := limiter.AllowN(ctx, key, limit, n)
						if !assert.NoError(t, err) {
							return
						}
						if res.Allowed {
							allowed.Add(n)
						}
					}
				}()
			}
			wg.Wait()
			counted := 100 - remaining(t, plain, key, limit)
			assert.Equal(t, allowed.Load(), counted, "%v: allowed is counted, exactly", limit)
			assert.LessOrEqual(t, counted, int64(100), "%v", limit)
		}
	})
}

// A batch's reply lost once is sent again, and each of its calls is
// answered as its second run decided, counted against what the first
// run counted, as a single call sent again is (see
// TestResentAllowCountsAgainButNeverBeyondTheLimit): a call can be refused
// early, but no run takes the key beyond its limit, and allowed means
// counted.
func TestResentBatchCountsAgainButNeverBeyondTheLimit(t *testing.T) {
	redistest.EachCutBackend(t, func(ctx context.Context, client redis.UniversalClient) error {
		return ratelimit.LoadScripts(ctx, client)
	}, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		loadScripts(t, client)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range coalesceLimits {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit)) })
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)
			first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) })
			require.Equal(t, 1, gate.Held(t))
			outs := queueCalls(t, lane{limiter, key, limit, 1}, background(6), func(ctx context.Context, _ int) (ratelimit.Result, error) {
				return limiter.Allow(ctx, key, limit)
			})
			cuts := cutter.Cuts()
			batchHash := ratelimit.BatchHashes[0]
			if limit.Algorithm == ratelimit.FixedWindow {
				batchHash = ratelimit.BatchHashes[1]
			}
			cutter.Arm(1, batchHash, dataKey(key, limit))
			gate.Release()

			o := await(t, first)
			require.NoError(t, o.err)
			assert.Equal(t, int64(9), o.res.Remaining)
			var rems []int64
			refused := 0
			for _, out := range outs {
				o := await(t, out)
				require.NoError(t, o.err, "%v", limit)
				if o.res.Allowed {
					rems = append(rems, o.res.Remaining)
				} else {
					refused++
					assert.Zero(t, o.res.Remaining, "%v", limit)
					assert.Positive(t, o.res.RetryAfter, "%v", limit)
				}
			}
			cutter.RequireOneMore(t, cuts)
			assert.Equal(t, []int{1, 6, 6}, gate.Sizes(), "%v: the batch was sent twice", limit)
			// The first run counted 6 of the 9 left; the second, 3 more.
			slices.Sort(rems)
			assert.Equal(t, []int64{0, 1, 2}, rems, "%v: the second run's answers", limit)
			assert.Equal(t, 3, refused, "%v: refused early", limit)
			assert.Zero(t, remaining(t, plain, key, limit), "%v: 1 + 6 + 3 counted, nothing beyond", limit)
		}
	})
}

// A call whose ctx ends while it waits behind the batch in flight leaves
// the queue with ctx's error, having sent nothing, and is not counted; one
// whose ctx ends while its batch is in flight (and another call sends
// it) returns at once with ctx's error, its outcome unknown, and is
// counted, as the batch ran, the batch's first call too. The calls beside
// them get their own answers.
func TestContextEndingWhileQueuedOrInFlight(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range coalesceLimits {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit)) })
			call := func(ctx context.Context, _ int) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) }
			gate := newScriptGate(client, key, limit)

			// Queued: the first call held in flight, A and B behind it.
			gate.Hold(1)
			first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return call(ctx, 0) })
			gate.Held(t)
			ctxA, cancelA := context.WithCancel(ctx)
			outs := queueCalls(t, lane{limiter, key, limit, 1}, []context.Context{ctxA, ctx}, call)
			cancelA()
			o := await(t, outs[0])
			require.ErrorIs(t, o.err, context.Canceled, "%v", limit)
			assert.NotErrorIs(t, o.err, ratelimit.ErrOutcomeUnknown, "%v: nothing was sent", limit)
			assert.Contains(t, o.err.Error(), `ratelimit: allow "`+key+`"`)
			gate.Release()
			for _, out := range []chan outcome{first, outs[1]} {
				o := await(t, out)
				require.NoError(t, o.err, "%v", limit)
				assert.True(t, o.res.Allowed, "%v", limit)
			}
			assert.Equal(t, int64(8), remaining(t, plain, key, limit), "%v: A was not counted", limit)
			assert.Equal(t, []int{1, 1}, gate.Sizes(), "%v: B went on alone", limit)

			// In flight: A, then B, queued behind the first call held in
			// flight; A, first in the queue, sends their batch, which is
			// held, and B's ctx ends.
			gate.Hold(2)
			first = startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return call(ctx, 0) })
			gate.Held(t)
			ctxA, cancelA = context.WithCancel(ctx)
			ctxB, cancelB := context.WithCancel(ctx)
			outA := queueCalls(t, lane{limiter, key, limit, 1}, []context.Context{ctxA}, call)[0]
			outB := queueCalls(t, lane{limiter, key, limit, 1}, []context.Context{ctxB}, call)[0]
			gate.Release()
			require.Equal(t, 2, gate.Held(t), "%v: A and B in one batch", limit)
			cancelB()
			o = await(t, outB)
			require.ErrorIs(t, o.err, context.Canceled, "%v", limit)
			assert.ErrorIs(t, o.err, ratelimit.ErrOutcomeUnknown, "%v: B's batch was in flight", limit)
			assert.Contains(t, o.err.Error(), `ratelimit: allow "`+key+`"`)
			// A, first in the batch, returns at once too.
			cancelA()
			o = await(t, outA)
			require.ErrorIs(t, o.err, context.Canceled, "%v", limit)
			assert.ErrorIs(t, o.err, ratelimit.ErrOutcomeUnknown, "%v: A's batch was in flight", limit)
			gate.Release()
			o = await(t, first)
			require.NoError(t, o.err, "%v", limit)
			assert.Equal(t, int64(7), o.res.Remaining, "%v", limit)
			// The batch runs on after its callers returned: wait for it.
			assert.Eventually(t, func() bool { return remaining(t, plain, key, limit) == 5 }, 30*time.Second, time.Millisecond,
				"%v: the batch ran, A and B included", limit)
			assert.Equal(t, []int{1, 1, 1, 2}, gate.Sizes(), "%v", limit)
		}
	})
}

// Bad input is refused before it is queued: a call with a bad n or limit
// on a key whose batch is in flight returns its error at once, and the
// calls on the key go on as if it had not been made.
func TestBadInputIsRefusedBeforeQueueing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		for _, limit := range coalesceLimits {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit)) })
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)
			first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) })
			gate.Held(t)
			outs := queueCalls(t, lane{limiter, key, limit, 1}, background(1), func(ctx context.Context, _ int) (ratelimit.Result, error) {
				return limiter.Allow(ctx, key, limit)
			})

			badN := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.AllowN(ctx, key, limit, -1) })
			assert.ErrorIs(t, await(t, badN).err, ratelimit.ErrInvalidN, "%v: returned while the batch is held", limit)
			bad := limit
			bad.Rate = 0
			badLimit := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, bad) })
			assert.ErrorIs(t, await(t, badLimit).err, ratelimit.ErrInvalidLimit, "%v", limit)

			gate.Release()
			for _, out := range []chan outcome{first, outs[0]} {
				o := await(t, out)
				require.NoError(t, o.err, "%v", limit)
				assert.True(t, o.res.Allowed, "%v", limit)
			}
			assert.Equal(t, []int{1, 1}, gate.Sizes(), "%v", limit)
			assert.Equal(t, int64(8), remaining(t, plain, key, limit), "%v", limit)
		}
	})
}

// A key of another type fails every call of a batch with the error a
// call alone gets, WRONGTYPE, a known outcome, and is left as it was.
func TestWrongTypeFailsEveryCallOfABatch(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter := newLimiter(t, client)
		for _, limit := range coalesceLimits {
			key := b.Key(t, "rl-test:")
			list := dataKey(key, limit)
			t.Cleanup(func() { b.Client.Del(ctx, list) })
			require.NoError(t, b.Client.RPush(ctx, list, "x").Err())
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)
			first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) })
			gate.Held(t)
			outs := queueCalls(t, lane{limiter, key, limit, 1}, background(3), func(ctx context.Context, _ int) (ratelimit.Result, error) {
				return limiter.Allow(ctx, key, limit)
			})
			gate.Release()
			for _, out := range append(outs, first) {
				o := await(t, out)
				require.Error(t, o.err, "%v", limit)
				assert.Contains(t, o.err.Error(), `ratelimit: allow "`+key+`": `, "%v", limit)
				assert.Contains(t, o.err.Error(), "WRONGTYPE", "%v", limit)
				assert.NotErrorIs(t, o.err, ratelimit.ErrOutcomeUnknown, "%v", limit)
			}
			assert.Equal(t, []int{1, 3}, gate.Sizes(), "%v", limit)
			assert.Equal(t, []string{"x"}, b.Client.LRange(ctx, list, 0, -1).Val())
			assert.Equal(t, time.Duration(-1), b.Client.PTTL(ctx, list).Val())
		}
	})
}

// Calls on one key with different limits or different n never share a
// batch: each batch carries the calls of one n and one limit.
func TestBatchesNeverMixLimitsOrN(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		// Two GCRA limits of one rate, so one time on the key, and two
		// bursts; and two n.
		narrow := ratelimit.Limit{Rate: 10, Period: time.Hour}
		wide := ratelimit.Limit{Rate: 10, Period: time.Hour, Burst: 12}
		kinds := []struct {
			limit ratelimit.Limit
			n     int64
		}{{narrow, 1}, {narrow, 2}, {wide, 1}}
		key := b.Key(t, "rl-test:")
		t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key)) })
		gate := newScriptGate(client, key, narrow)
		gate.Hold(len(kinds))
		var outs []chan outcome
		var ns []int64
		for _, k := range kinds {
			outs = append(outs, startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) {
				return limiter.AllowN(ctx, key, k.limit, k.n)
			}))
			ns = append(ns, k.n)
			gate.Held(t)
		}
		const each = 4
		for _, k := range kinds {
			outs = append(outs, queueCalls(t, lane{limiter, key, k.limit, k.n}, background(each), func(ctx context.Context, _ int) (ratelimit.Result, error) {
				return limiter.AllowN(ctx, key, k.limit, k.n)
			})...)
			for range each {
				ns = append(ns, k.n)
			}
		}
		for range kinds {
			gate.Release()
		}
		allowed := int64(0)
		for i, out := range outs {
			o := await(t, out)
			require.NoError(t, o.err)
			if o.res.Allowed {
				allowed += ns[i]
			}
		}
		sent := gate.Sent()
		require.Len(t, sent, 2*len(kinds), "each kind's first alone, then each kind's batch")
		batches := map[string]int{}
		for _, s := range sent[len(kinds):] {
			batches[fmt.Sprint(s.n, "/", s.ceiling)] = s.size
		}
		want := map[string]int{}
		for _, k := range kinds {
			burst := k.limit.Burst
			if burst == 0 {
				burst = k.limit.Rate
			}
			tau := burst * int64(k.limit.Period/time.Microsecond) / k.limit.Rate
			want[fmt.Sprint(k.n, "/", tau)] = each
		}
		assert.Equal(t, want, batches, "one batch per kind, of that kind's calls")
		// The key's time counts exactly the events allowed, within the wide burst.
		res, err := plain.AllowN(ctx, key, wide, 0)
		require.NoError(t, err)
		assert.Equal(t, allowed, 12-res.Remaining, "allowed is counted, exactly")
	})
}

// With DisableCoalescing, each call is its own script call: calls made
// while one is held in flight go to Redis at once, each alone.
func TestDisableCoalescingSendsEachCallAlone(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter, err := ratelimit.New(client, ratelimit.Config{DisableCoalescing: true})
		require.NoError(t, err)
		for _, limit := range coalesceLimits {
			key := b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit)) })
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)
			outs := []chan outcome{startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) })}
			gate.Held(t)
			for range 9 {
				outs = append(outs, startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) }))
			}
			// The 9 reach Redis while the first is held: none waits.
			for i := range 9 {
				o := await(t, outs[i+1])
				require.NoError(t, o.err, "%v", limit)
				assert.True(t, o.res.Allowed, "%v", limit)
			}
			gate.Release()
			o := await(t, outs[0])
			require.NoError(t, o.err, "%v", limit)
			assert.Zero(t, o.res.Remaining, "%v: the first ran last", limit)
			assert.Equal(t, slices.Repeat([]int{1}, 10), gate.Sizes(), "%v", limit)
		}
	})
}

// A batch carries at most 256 calls, so that none holds Redis long: 300
// calls queued behind one in flight go as a batch of 256, then one of the
// 44 left, and each is answered as in turn.
func TestBatchCarriesAtMost256Calls(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t, func(o *redis.UniversalOptions) { o.PoolSize = 8 })
		loadScripts(t, client)
		limiter, plain := newLimiter(t, client), newLimiter(t, b.Client)
		limit := ratelimit.Limit{Rate: 1000, Period: time.Hour}
		key := b.Key(t, "rl-test:")
		t.Cleanup(func() { b.Client.Del(ctx, gcraKey(key)) })
		gate := newScriptGate(client, key, limit)
		gate.Hold(1)
		first := startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return limiter.Allow(ctx, key, limit) })
		gate.Held(t)
		outs := queueCalls(t, lane{limiter, key, limit, 1}, background(300), func(ctx context.Context, _ int) (ratelimit.Result, error) {
			return limiter.Allow(ctx, key, limit)
		})
		gate.Release()
		rems := []int64{await(t, first).res.Remaining}
		for _, out := range outs {
			o := await(t, out)
			require.NoError(t, o.err)
			require.True(t, o.res.Allowed)
			rems = append(rems, o.res.Remaining)
		}
		assert.Equal(t, []int{1, 256, 44}, gate.Sizes())
		slices.Sort(rems)
		for i, r := range rems {
			assert.Equal(t, int64(699+i), r, "each call its own place in turn")
		}
		assert.Equal(t, int64(699), remaining(t, plain, key, limit))
	})
}

// A batch counts exactly at the edges of what a limit can count: a
// FixedWindow of MaxRate and a GCRA limit whose full burst is near
// MaxBurstTime, each asked for half of it by three calls, a first alone and two in a batch,
// answer as the same calls made in turn: the first two allowed, the
// third refused.
func TestBatchCountsExactlyAtTheEdges(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		loadScripts(t, client)
		limiter := newLimiter(t, client)
		plain, err := ratelimit.New(b.Client, ratelimit.Config{DisableCoalescing: true})
		require.NoError(t, err)
		for _, edge := range []struct {
			limit ratelimit.Limit
			n     int64
		}{
			{ratelimit.Limit{Rate: ratelimit.MaxRate, Period: time.Hour, Algorithm: ratelimit.FixedWindow}, ratelimit.MaxRate / 2},
			// One event per 2^30ms, a burst of 1024: tau is 2^40ms, near
			// MaxBurstTime, and nothing refills while the test runs.
			{ratelimit.Limit{Rate: 1, Period: (1 << 30) * time.Millisecond, Burst: 1024}, 512},
		} {
			limit := edge.limit
			key, inTurn := b.Key(t, "rl-test:"), b.Key(t, "rl-test:")
			t.Cleanup(func() { b.Client.Del(ctx, dataKey(key, limit), dataKey(inTurn, limit)) })
			call := func(ctx context.Context, _ int) (ratelimit.Result, error) {
				return limiter.AllowN(ctx, key, limit, edge.n)
			}
			gate := newScriptGate(client, key, limit)
			gate.Hold(1)
			outs := []chan outcome{startCall(ctx, func(ctx context.Context) (ratelimit.Result, error) { return call(ctx, 0) })}
			gate.Held(t)
			outs = append(outs, queueCalls(t, lane{limiter, key, limit, edge.n}, background(2), call)...)
			gate.Release()
			var results, want []ratelimit.Result
			for _, out := range outs {
				o := await(t, out)
				require.NoError(t, o.err, "%v", limit)
				results = append(results, o.res)
				res, err := plain.AllowN(ctx, inTurn, limit, edge.n)
				require.NoError(t, err, "%v", limit)
				want = append(want, res)
			}
			assert.Equal(t, []int{1, 2}, gate.Sizes(), "%v", limit)
			sortResults(results)
			assert.Equal(t, []bool{true, true, false}, []bool{want[0].Allowed, want[1].Allowed, want[2].Allowed}, "%v", limit)
			for i := range want {
				assert.Equal(t, want[i].Allowed, results[i].Allowed, "%v: call %d", limit, i)
				assert.Equal(t, want[i].Remaining, results[i].Remaining, "%v: call %d", limit, i)
				if !b.Real {
					assert.Equal(t, want[i], results[i], "%v: call %d", limit, i)
				}
			}
			assert.Equal(t, remaining(t, plain, inTurn, limit), remaining(t, plain, key, limit), "%v: the same count", limit)
		}
	})
}
