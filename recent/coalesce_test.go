package recent_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/recent"
)

// The promise of coalescing: concurrent Adds (and Removes) of a few values
// each, made through one List, go to Redis as one script call, and each
// caller gets what its call alone, made in turn, would have got. These
// tests hold the first call in flight with a scriptGate, so that the calls
// made meanwhile queue behind it and go together, in one batch, once it
// returns.

// A scriptGate is a go-redis hook that records the ARGV of every script
// call (EVALSHA or EVAL) its client makes, in the order they are made,
// and, while it holds, keeps each such call from being sent until Let
// lets it through.
type scriptGate struct {
	mu      sync.Mutex
	calls   [][]string
	holding bool
	held    int // calls held since Hold
	let     int // of them, calls let through
	pass    chan struct{}
}

func newScriptGate() *scriptGate { return &scriptGate{pass: make(chan struct{}, 1000)} }

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		args := cmd.Args()
		var argv []string
		for _, a := range args[3+args[2].(int):] {
			argv = append(argv, fmt.Sprint(a))
		}
		g.mu.Lock()
		g.calls = append(g.calls, argv)
		hold := g.holding
		if hold {
			g.held++
		}
		g.mu.Unlock()
		if hold {
			<-g.pass
		}
		return next(ctx, cmd)
	}
}

// Hold makes the script calls made from now on wait until let through.
func (g *scriptGate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holding = true
	g.calls = nil
	g.held, g.let = 0, 0
}

// Let lets the first n held calls not yet let through, held now or to
// come, through.
func (g *scriptGate) Let(n int) {
	g.mu.Lock()
	g.let += n
	g.mu.Unlock()
	for range n {
		g.pass <- struct{}{}
	}
}

// Open stops holding, and lets every held call through.
func (g *scriptGate) Open() {
	g.mu.Lock()
	g.holding = false
	n := g.held - g.let
	g.mu.Unlock()
	g.Let(n)
}

// Calls returns the ARGV of each script call made since Hold, in order.
func (g *scriptGate) Calls() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// WaitHeld waits until n script calls have been held since Hold.
func (g *scriptGate) WaitHeld(t *testing.T, n int) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d script calls held", n), func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.held == n
	})
}

// waitQueued waits until n calls of l, Adds and Removes, wait in a queue
// of calls behind one in flight.
func waitQueued(t *testing.T, l *recent.List, n int) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("%d calls queued", n), func() bool { return recent.Queued(l) == n })
}

// waitUntil polls cond, failing t after a generous bound.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedList returns a List of cfg on a key of the test's own, through
// client, a client of b's server, with a scriptGate, and the package's
// scripts cached there, so that no call meets NOSCRIPT.
func gatedList(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cfg recent.Config) (*recent.List, *scriptGate) {
	t.Helper()
	cfg.Key = b.Key(t, "recent-test:")
	require.NoError(t, recent.LoadScripts(context.Background(), client))
	g := newScriptGate()
	client.AddHook(g)
	return newListOn(t, client, cfg), g
}

// crowd makes first, a call of l, waits until its script call is held,
// makes each of rest, calls of l, in turn once the one before has queued,
// and then opens g, and returns each call's error, first's at 0.
func crowd(t *testing.T, l *recent.List, g *scriptGate, first func() error, rest ...func() error) []error {
	t.Helper()
	return crowdAround(t, l, g, nil, first, rest...)
}

// crowdAround is crowd, but when between is not nil it lets first
// through alone, and calls between once the next script call, the
// batch's, is held, before it lets that through.
func crowdAround(t *testing.T, l *recent.List, g *scriptGate, between func(), first func() error, rest ...func() error) []error {
	t.Helper()
	g.Hold()
	errs := make([]error, 1+len(rest))
	var wg sync.WaitGroup
	for i, call := range append([]func() error{first}, rest...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = call()
		}()
		if i == 0 {
			g.WaitHeld(t, 1)
		} else {
			waitQueued(t, l, i)
		}
	}
	if between != nil {
		g.Let(1)
		g.WaitHeld(t, 2)
		between()
	}
	g.Open()
	wg.Wait()
	return errs
}

// sizes returns the number of values of each of calls, an add.lua ARGV's:
// all but the three arguments before them.
func addedValues(calls [][]string) (sizes []int, values []string) {
	for _, argv := range calls {
		sizes = append(sizes, len(argv)-3)
		values = append(values, argv[3:]...)
	}
	return sizes, values
}

// 100 concurrent Adds of three or four values each on one list go as a
// few script calls: the first alone, then the 99 queued behind it in
// batches of at most 64 calls (so that no batch holds the server for
// long), and, on a list whose Max fits in a listpack (Redis's compact
// form of a small sorted set, up to 128 items), of only as many as fit
// beside Max items, so that it stays one; each batch carries its Adds'
// values in the order the Adds were made. The list ends exactly as those
// Adds made one after the other would leave it: the Max newest values in
// that order, nothing twice, its TTL set; every caller gets nil, and the
// Observer one Done event for each, with its own values.
func TestConcurrentAddsEndAsInTurn(t *testing.T) {
	for _, tc := range []struct {
		max   int64
		batch int // the most Adds in a batch
	}{{30, (128 - 30) / 4}, {150, 64}} {
		t.Run(fmt.Sprintf("max=%d", tc.max), func(t *testing.T) { addsInTurn(t, tc.max, tc.batch) })
	}
}

// addsInTurn is TestConcurrentAddsEndAsInTurn on a list of at most
// maxItems, whose batches carry at most perBatch Adds.
func addsInTurn(t *testing.T, maxItems int64, perBatch int) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: maxItems, TTL: time.Minute, Observer: rec})
		var calls []func() error
		var made [][]string
		for i := range 100 {
			v := fmt.Sprintf("v%03d", i)
			values := []string{v, v + "+", v} // a value twice: the last counts
			if i%3 != 0 {
				values = []string{v + "a", v + "b", v + "c", v + "d"}
			}
			made = append(made, values)
			calls = append(calls, func() error { return l.Add(ctx, values...) })
		}
		for i, err := range crowd(t, l, g, calls[0], calls[1:]...) {
			assert.NoError(t, err, "Max %d: Add %d", maxItems, i)
		}

		sizes, sent := addedValues(g.Calls())
		inTurn := slices.Concat(made...)
		assert.Equal(t, inTurn, sent, "Max %d: every value sent once, the Adds in the order they were made", maxItems)
		wantSizes := []int{len(made[0])}
		for rest := made[1:]; len(rest) > 0; rest = rest[min(perBatch, len(rest)):] {
			wantSizes = append(wantSizes, len(slices.Concat(rest[:min(perBatch, len(rest))]...)))
		}
		assert.Equal(t, wantSizes, sizes, "Max %d: one Add alone, then batches of %d Adds", maxItems, perBatch)

		// The list as the Adds one after the other leave it: the newest
		// place of each value, newest first, at most Max.
		var want []string
		for i := len(inTurn) - 1; i >= 0 && int64(len(want)) < maxItems; i-- {
			if !slices.Contains(want, inTurn[i]) {
				want = append(want, inTurn[i])
			}
		}
		key := recent.DataKey(l)
		assert.Equal(t, want, values(t, l), "Max %d", maxItems)
		assert.Equal(t, int64(len(want)), b.Client.ZCard(ctx, key).Val(), "Max %d", maxItems)
		assert.Positive(t, b.Client.PTTL(ctx, key).Val(), "Max %d", maxItems)
		if b.Real && maxItems < 128 {
			assert.Equal(t, "listpack", b.Client.ObjectEncoding(ctx, key).Val(), "Max %d: kept compact", maxItems)
		}

		events := rec.Take()
		require.Len(t, events, 100, "Max %d: one event per Add", maxItems)
		units := map[int64]int{}
		for _, e := range events {
			assert.Equal(t, observe.Done, e.Kind)
			assert.Equal(t, "Add", e.Op)
			units[e.Units]++
		}
		assert.Equal(t, map[int64]int{4: 66, 3: 34}, units, "Max %d: each Add reports its own values", maxItems)
	})
}

// 30 concurrent Removes on one list go as two script calls, the first
// alone and the rest in one batch, and each caller counts exactly what
// its Remove, made in turn, finds: a value that two Removes name counts
// for the first of them only, and a value one Remove names twice counts
// once.
func TestConcurrentRemovesCountAsInTurn(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: 50, Observer: rec})
		var present []string
		for i := range 40 {
			present = append(present, fmt.Sprintf("v%02d", i))
		}
		require.NoError(t, l.Add(ctx, present[:20]...))
		require.NoError(t, l.Add(ctx, present[20:]...))
		rec.Take()

		// Remove i names v(i), v(i+1), v(i+1) again, and a value of its own
		// that the list never held, by which its part of the batch is known.
		counts := make([]int64, 30)
		var calls []func() error
		for i := range 30 {
			values := []string{fmt.Sprintf("v%02d", i), fmt.Sprintf("v%02d", i+1), fmt.Sprintf("v%02d", i+1), fmt.Sprintf("absent%02d", i)}
			calls = append(calls, func() (err error) {
				counts[i], err = l.Remove(ctx, values...)
				return err
			})
		}
		for i, err := range crowd(t, l, g, calls[0], calls[1:]...) {
			assert.NoError(t, err, "Remove %d", i)
		}

		sent := g.Calls()
		require.Len(t, sent, 2, "one Remove alone, then one batch")
		// The batch's ARGV: -Max-1, MaxAge, then each Remove's count and
		// values. The order of its Removes is the order they were made.
		order := []int{0}
		batch := sent[1][2:]
		for len(batch) > 0 {
			n, err := strconv.Atoi(batch[0])
			require.NoError(t, err)
			marker := batch[n]
			i, err := strconv.Atoi(strings.TrimPrefix(marker, "absent"))
			require.NoError(t, err, marker)
			order = append(order, i)
			batch = batch[1+n:]
		}
		assert.Len(t, order, 30, "the batch carried the 29 queued Removes")

		// Each count is what the Removes one after the other find.
		held := map[string]bool{}
		for _, v := range present {
			held[v] = true
		}
		for _, i := range order {
			var want int64
			for _, v := range []string{fmt.Sprintf("v%02d", i), fmt.Sprintf("v%02d", i+1), fmt.Sprintf("absent%02d", i)} {
				if held[v] {
					want++
					delete(held, v)
				}
			}
			assert.Equal(t, want, counts[i], "Remove %d", i)
		}
		assert.Equal(t, present[31:], reversed(values(t, l)), "v00 to v30 removed, the rest as they were")

		events := rec.Take()
		require.Len(t, events, 30)
		var total int64
		for _, e := range events {
			assert.Equal(t, "Remove", e.Op)
			total += e.Units
		}
		assert.Equal(t, int64(31), total, "each Remove reports its own count")
	})
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// A batch whose reply is lost, so that go-redis sends it again, answers
// each of its members as the batch's first run did, and as each call
// alone does when its reply is lost: every Add gets nil and the list
// holds the values as one run leaves them; every Remove counts what the
// second run found, 0 for the values the first run removed, as Remove's
// doc says.
func TestLostReplyOfABatch(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			client, cutter := b.CutClient(t)
			l, g := gatedList(t, b, client, recent.Config{Max: 10, TTL: time.Minute})
			key := recent.DataKey(l)
			names := []string{"first", "queued1", "queued2", "queued3", "queued4", "queued5"}

			var adds []func() error
			for _, v := range names {
				adds = append(adds, func() error { return l.Add(ctx, v) })
			}
			cutter.Arm(1, "evalsha", key, "queued5") // in the batch, not in the first call
			for i, err := range crowd(t, l, g, adds[0], adds[1:]...) {
				assert.NoError(t, err, "Add %d", i)
			}
			cutter.RequireOneMore(t, 0)
			sizes, _ := addedValues(g.Calls())
			assert.Equal(t, []int{1, 5, 5}, sizes, "the first alone, then the others in one batch, sent twice")
			assert.Equal(t, reversed(names), values(t, l))
			assert.Equal(t, int64(6), b.Client.ZCard(ctx, key).Val(), "no value twice")
			assert.Positive(t, b.Client.PTTL(ctx, key).Val())

			counts := make([]int64, len(names))
			var removes []func() error
			for i, v := range names {
				removes = append(removes, func() (err error) {
					counts[i], err = l.Remove(ctx, v, "absent")
					return err
				})
			}
			cutter.Arm(1, "evalsha", key, "queued5")
			for i, err := range crowd(t, l, g, removes[0], removes[1:]...) {
				assert.NoError(t, err, "Remove %d", i)
			}
			cutter.RequireOneMore(t, 1)
			assert.Len(t, g.Calls(), 3, "the first alone, then the others in one batch, sent twice")
			assert.Equal(t, []int64{1, 0, 0, 0, 0, 0}, counts, "the batch's second run found none of its values")
			assert.Zero(t, b.Client.Exists(ctx, key).Val(), "every value removed, the emptied list left no key")
		})
	}
}

// A call whose ctx ends while it waits in the queue leaves it: it returns
// an error matching ctx's, not ErrOutcomeUnknown, with nothing sent, and
// the calls queued behind it go on. One whose ctx ends while its batch is
// in flight returns at once with ErrOutcomeUnknown and ctx's error, and
// its values are added with the batch's. Each reports one Error event.
func TestContextEndsWhileQueuedOrInFlight(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: 10, Observer: rec})

		// a is held in flight; b queues, then c and d; b's ctx ends.
		g.Hold()
		done := make(chan error, 4)
		go func() { done <- l.Add(ctx, "a") }()
		g.WaitHeld(t, 1)
		bCtx, cancelB := context.WithCancel(ctx)
		bDone := make(chan error, 1)
		go func() { bDone <- l.Add(bCtx, "b") }()
		waitQueued(t, l, 1)
		go func() { done <- l.Add(ctx, "c") }()
		waitQueued(t, l, 2)
		dCtx, cancelD := context.WithCancel(ctx)
		dDone := make(chan error, 1)
		go func() { dDone <- l.Add(dCtx, "d") }()
		waitQueued(t, l, 3)
		cancelB()
		err := <-bDone
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "b was never sent")
		assertNamesMethodOnce(t, err, "add", "left the queue")

		// a returns; c and d go in one batch, which is held; d's ctx ends.
		g.Let(1)
		g.WaitHeld(t, 2)
		cancelD()
		err = <-dDone
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, recent.ErrOutcomeUnknown, "d was sent")
		assertNamesMethodOnce(t, err, "add", "ended in flight")
		g.Open()
		assert.NoError(t, <-done)
		assert.NoError(t, <-done)

		sizes, sent := addedValues(g.Calls())
		assert.Equal(t, []int{1, 2}, sizes, "a alone, then c and d")
		assert.Equal(t, []string{"a", "c", "d"}, sent)
		assert.Equal(t, []string{"d", "c", "a"}, values(t, l), "d's Add took effect, b's never ran")

		kinds := map[observe.Kind]int{}
		for _, e := range rec.Take() {
			kinds[e.Kind]++
		}
		assert.Equal(t, map[observe.Kind]int{observe.Done: 2, observe.Error: 2}, kinds, "one final event per call")
	})
}

// Bad input is refused at once, with nothing sent and nothing queued,
// while a call is in flight and another queued behind it; those two are
// not failed by it.
func TestBadInputIsRefusedBeforeQueueing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: 10})
		var nilCtx context.Context
		var refused []error
		errs := crowd(t, l, g, func() error { return l.Add(ctx, "a") }, func() error {
			refused = append(refused, l.Add(nilCtx, "x"))
			_, err := l.Remove(nilCtx, "x")
			refused = append(refused, err, l.Add(ctx, make([]string, recent.MaxBatch+1)...))
			waitQueued(t, l, 0) // none of them queued
			return l.Add(ctx, "b")
		})
		assert.Equal(t, []error{nil, nil}, errs)
		for i, err := range refused {
			assert.ErrorIs(t, err, recent.ErrInvalidArgument, "call %d", i)
		}
		assert.Len(t, g.Calls(), 2, "a, then b")
		assert.Equal(t, []string{"b", "a"}, values(t, l))
	})
}

// A key of another type fails every Add of a batch with WRONGTYPE, as it
// fails each alone, a known outcome, and is left as it was.
func TestWrongTypeFailsEachMemberOfABatch(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: 10, TTL: time.Minute})
		key := recent.DataKey(l)
		require.NoError(t, b.Client.Set(ctx, key, "x", 0).Err())
		var calls []func() error
		for i := range 4 {
			calls = append(calls, func() error { return l.Add(ctx, fmt.Sprint(i)) })
		}
		for i, err := range crowd(t, l, g, calls[0], calls[1:]...) {
			require.Error(t, err, "Add %d", i)
			assert.Contains(t, err.Error(), "WRONGTYPE", "Add %d", i)
			assert.NotErrorIs(t, err, recent.ErrOutcomeUnknown, "Add %d", i)
			assertNamesMethodOnce(t, err, "add", "WRONGTYPE")
		}
		assert.Len(t, g.Calls(), 2, "one Add alone, then a batch of three")
		assert.Equal(t, "x", b.Client.Get(ctx, key).Val())
		assert.Equal(t, time.Duration(-1), b.Client.TTL(ctx, key).Val())
	})
}

// With DisableCoalescing every call is its own script call, in flight
// beside the others; so is, with coalescing on, an Add or a Remove of
// more than a few values, which does not wait behind a call in flight,
// and an Add to a list whose Max leaves no room for a batch in a
// listpack.
func TestCallsSentAlone(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, g := gatedList(t, b, b.NewClient(t), recent.Config{Max: 10, DisableCoalescing: true})
		g.Hold()
		done := make(chan error, 5)
		for i := range 4 {
			go func() { done <- l.Add(ctx, fmt.Sprint(i)) }()
		}
		go func() { _, err := l.Remove(ctx, "x"); done <- err }()
		g.WaitHeld(t, 5)
		g.Open()
		for range 5 {
			assert.NoError(t, <-done)
		}
		assert.Len(t, values(t, l), 4)

		l, g = gatedList(t, b, b.NewClient(t), recent.Config{Max: 10})
		g.Hold()
		go func() { done <- l.Add(ctx, "a") }()
		go func() { _, err := l.Remove(ctx, "x"); done <- err }()
		g.WaitHeld(t, 2)
		go func() { done <- l.Add(ctx, "b", "c", "d", "e", "f") }()
		go func() { _, err := l.Remove(ctx, "b", "c", "d", "e", "f"); done <- err }()
		g.WaitHeld(t, 4)
		g.Open()
		for range 4 {
			assert.NoError(t, <-done)
		}

		// From a Max of 121, no two Adds fit beside Max items in a
		// listpack: Adds go alone, and Removes still go together.
		l, g = gatedList(t, b, b.NewClient(t), recent.Config{Max: 121})
		g.Hold()
		for i := range 3 {
			go func() { done <- l.Add(ctx, fmt.Sprint(i)) }()
		}
		g.WaitHeld(t, 3)
		g.Open()
		for range 3 {
			assert.NoError(t, <-done)
		}
		errs := crowd(t, l, g, func() error { _, err := l.Remove(ctx, "0"); return err },
			func() error { _, err := l.Remove(ctx, "1"); return err }, func() error { _, err := l.Remove(ctx, "2"); return err })
		assert.Equal(t, []error{nil, nil, nil}, errs)
		assert.Len(t, g.Calls(), 2, "one Remove alone, then a batch")
	})
}

// With MaxAge, a batch reads the server's clock once, and ages items out
// as each of its calls alone would at that time: a batch of Removes
// counts no item that has grown too old since the call before it, and a
// batch of Adds drops such items.
func TestBatchesAgeItemsOut(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, g := gatedList(t, b, b.Client, recent.Config{Max: 10, MaxAge: time.Minute})
	key := recent.DataKey(l)
	require.NoError(t, l.Add(ctx, "old1", "old2"))
	b.Advance(time.Minute)
	require.NoError(t, l.Add(ctx, "young1", "young2"))

	counts := make([]int64, 3)
	errs := crowdAround(t, l, g, func() { b.Advance(time.Millisecond) }, func() (err error) {
		counts[0], err = l.Remove(ctx, "none")
		return err
	}, func() (err error) {
		counts[1], err = l.Remove(ctx, "old1", "young1")
		return err
	}, func() (err error) {
		counts[2], err = l.Remove(ctx, "old2", "young1")
		return err
	})
	assert.Equal(t, []error{nil, nil, nil}, errs)
	assert.Len(t, g.Calls(), 2, "one Remove alone, then a batch")
	assert.Equal(t, []int64{0, 1, 0}, counts, "the old items count for no one, young1 for the first to name it")
	assert.Equal(t, []string{"young2"}, b.Client.ZRange(ctx, key, 0, -1).Val(), "the batch dropped the old items")

	b.Advance(time.Minute - time.Millisecond)
	errs = crowdAround(t, l, g, func() { b.Advance(time.Millisecond) },
		func() error { return l.Add(ctx, "a") }, func() error { return l.Add(ctx, "b") }, func() error { return l.Add(ctx, "c") })
	assert.Equal(t, []error{nil, nil, nil}, errs)
	assert.Len(t, g.Calls(), 2, "one Add alone, then a batch")
	assert.Equal(t, []string{"a", "b", "c"}, b.Client.ZRange(ctx, key, 0, -1).Val(), "the batch dropped young2, which the Add before it kept")
}
