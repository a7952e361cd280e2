package coalesce

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// gate is a Send that records each batch and blocks until released.
type gate struct {
	mu      sync.Mutex
	batches [][]int
	ctxs    []context.Context
	release chan struct{}
	fail    error
}

func newGate() *gate { return &gate{release: make(chan struct{}, 100)} }

func (g *gate) send(ctx context.Context, key string, reqs []int) ([]string, error) {
	g.mu.Lock()
	g.batches = append(g.batches, append([]int(nil), reqs...))
	g.ctxs = append(g.ctxs, ctx)
	g.mu.Unlock()
	<-g.release
	if g.fail != nil {
		return nil, g.fail
	}
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = fmt.Sprintf("%s:%d", key, r)
	}
	return out, nil
}

func (g *gate) sent() [][]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]int(nil), g.batches...)
}

// waitFor polls cond, failing the test after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func queuedOn[K comparable, Req, Res any](g *Group[K, Req, Res], key K) int {
	return g.Queued(key)
}

type outcome struct {
	res string
	err error
}

// start runs Do(ctx, key, req) in a goroutine and returns its outcome's channel.
func start(ctx context.Context, g *Group[string, int, string], key string, req int) chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := g.Do(ctx, key, req)
		ch <- outcome{res, err}
	}()
	return ch
}

func TestLoneCallIsSentAloneWithItsOwnContext(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
	gt.release <- struct{}{}
	res, err := g.Do(ctx, "k", 7)
	if err != nil || res != "k:7" {
		t.Fatalf("Do = %q, %v", res, err)
	}
	if got := gt.sent(); len(got) != 1 || len(got[0]) != 1 {
		t.Fatalf("batches %v, want one of one call", got)
	}
	if gt.ctxs[0] != ctx {
		t.Fatal("a lone call was not sent with its own context")
	}
	if len(g.lanes) != 0 {
		t.Fatalf("%d lanes left after the call", len(g.lanes))
	}
}

func TestCallsQueuedBehindABatchGoAsOneInArrivalOrder(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	var rest []chan outcome
	for i := 1; i <= 5; i++ {
		rest = append(rest, start(context.Background(), g, "k", i))
		waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == i })
	}
	gt.release <- struct{}{}
	gt.release <- struct{}{}
	if o := <-first; o.err != nil || o.res != "k:0" {
		t.Fatalf("first = %+v", o)
	}
	for i, ch := range rest {
		if o := <-ch; o.err != nil || o.res != fmt.Sprintf("k:%d", i+1) {
			t.Fatalf("call %d = %+v", i+1, o)
		}
	}
	got := gt.sent()
	if len(got) != 2 || fmt.Sprint(got[1]) != "[1 2 3 4 5]" {
		t.Fatalf("batches %v, want [[0] [1 2 3 4 5]]", got)
	}
	if len(g.lanes) != 0 {
		t.Fatalf("%d lanes left after the calls", len(g.lanes))
	}
}

func TestBatchesAreCappedAtMax(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send, Max: 4}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	var rest []chan outcome
	for i := 1; i <= 10; i++ {
		rest = append(rest, start(context.Background(), g, "k", i))
		waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == i })
	}
	for range 4 {
		gt.release <- struct{}{}
	}
	<-first
	for _, ch := range rest {
		if o := <-ch; o.err != nil {
			t.Fatal(o.err)
		}
	}
	if got := fmt.Sprint(gt.sent()); got != "[[0] [1 2 3 4] [5 6 7 8] [9 10]]" {
		t.Fatalf("batches %s", got)
	}
}

func TestKeysHaveLanesOfTheirOwn(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	a := start(context.Background(), g, "a", 1)
	waitFor(t, "a's batch", func() bool { return len(gt.sent()) == 1 })
	b := start(context.Background(), g, "b", 2)
	waitFor(t, "b's batch, beside a's", func() bool { return len(gt.sent()) == 2 })
	gt.release <- struct{}{}
	gt.release <- struct{}{}
	if oa, ob := <-a, <-b; oa.res != "a:1" || ob.res != "b:2" {
		t.Fatalf("a = %+v, b = %+v", oa, ob)
	}
}

func TestACallWhoseContextEndsWhileQueuedLeavesUnsent(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	gone := start(ctx, g, "k", 1)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 1 })
	stays := start(context.Background(), g, "k", 2)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 2 })
	cancel()
	o := <-gone
	if !errors.Is(o.err, context.Canceled) || callerr.OutcomeUnknown(o.err) {
		t.Fatalf("the call that left: %v; want context.Canceled, outcome known", o.err)
	}
	gt.release <- struct{}{}
	gt.release <- struct{}{}
	<-first
	if o := <-stays; o.err != nil || o.res != "k:2" {
		t.Fatalf("the call that stayed = %+v", o)
	}
	if got := fmt.Sprint(gt.sent()); got != "[[0] [2]]" {
		t.Fatalf("batches %s: the call that left was sent", got)
	}
}

func TestACallWhoseContextEndsInFlightReturnsOutcomeUnknown(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	a := start(context.Background(), g, "k", 1)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 1 })
	b := start(ctx, g, "k", 2)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 2 })
	gt.release <- struct{}{}
	<-first
	waitFor(t, "the second batch", func() bool { return len(gt.sent()) == 2 })
	cancel()
	o := <-b // returns while its batch is still in flight
	if !errors.Is(o.err, context.Canceled) || !callerr.OutcomeUnknown(o.err) {
		t.Fatalf("the call cut short in flight: %v; want context.Canceled, outcome unknown", o.err)
	}
	var u Unsettled
	u.Note("b", o.err)
	landed := make(chan struct{})
	go func() {
		u.Settle(context.Background(), "b")
		close(landed)
	}()
	select {
	case <-landed:
		t.Fatal("Landed returned while the batch was in flight")
	case <-time.After(10 * time.Millisecond):
	}
	gt.release <- struct{}{}
	if o := <-a; o.err != nil || o.res != "k:1" {
		t.Fatalf("its batch's other call = %+v", o)
	}
	<-landed // returns once the batch has: a hang fails the test by its timeout
	if len(u.batches) != 0 {
		t.Fatal("a settled call is still remembered")
	}
	u.Settle(context.Background(), "never noted") // returns at once
}

func TestALeaderWhoseContextEndedHandsOn(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	// Queue a call, then end its ctx while the lane's mutex is held, and
	// let the first batch return: the batch may name it the next leader
	// before it sees its ctx end, and it must then hand on.
	ctx, cancel := context.WithCancel(context.Background())
	gone := start(ctx, g, "k", 1)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 1 })
	stays := start(context.Background(), g, "k", 2)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 2 })
	g.mu.Lock()
	cancel()
	gt.release <- struct{}{}
	g.mu.Unlock()
	if o := <-gone; !errors.Is(o.err, context.Canceled) || callerr.OutcomeUnknown(o.err) {
		t.Fatalf("the leader that left: %v", o.err)
	}
	gt.release <- struct{}{}
	<-first
	if o := <-stays; o.err != nil || o.res != "k:2" {
		t.Fatalf("the call behind it = %+v", o)
	}
	if got := fmt.Sprint(gt.sent()); got != "[[0] [2]]" {
		t.Fatalf("batches %s: the call that left was sent", got)
	}
}

func TestSendErrorsReachEveryMember(t *testing.T) {
	gt := newGate()
	gt.fail = errors.New("boom")
	g := &Group[string, int, string]{Send: gt.send}
	first := start(context.Background(), g, "k", 0)
	waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
	a := start(context.Background(), g, "k", 1)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 1 })
	b := start(context.Background(), g, "k", 2)
	waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 2 })
	gt.release <- struct{}{}
	gt.release <- struct{}{}
	for _, ch := range []chan outcome{first, a, b} {
		if o := <-ch; o.err != gt.fail {
			t.Fatalf("err = %v, want Send's", o.err)
		}
	}
}

func TestABatchTakesTheLatestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noDeadline  bool
		wantLatest  bool
		wantNothing bool
	}{
		{name: "every member has one", wantLatest: true},
		{name: "one has none", noDeadline: true, wantNothing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gt := newGate()
			g := &Group[string, int, string]{Send: gt.send}
			first := start(context.Background(), g, "k", 0)
			waitFor(t, "the first batch", func() bool { return len(gt.sent()) == 1 })
			now := time.Now()
			near, c1 := context.WithDeadline(context.Background(), now.Add(time.Hour))
			defer c1()
			far, c2 := context.WithDeadline(context.Background(), now.Add(2*time.Hour))
			defer c2()
			second := far
			if tc.noDeadline {
				second = context.Background()
			}
			a := start(near, g, "k", 1)
			waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 1 })
			b := start(second, g, "k", 2)
			waitFor(t, "the call to queue", func() bool { return queuedOn(g, "k") == 2 })
			gt.release <- struct{}{}
			gt.release <- struct{}{}
			<-first
			<-a
			<-b
			gt.mu.Lock()
			d, ok := gt.ctxs[1].Deadline()
			gt.mu.Unlock()
			if tc.wantNothing && ok {
				t.Fatalf("the batch has deadline %v; a member had none", d)
			}
			if tc.wantLatest {
				fd, _ := far.Deadline()
				if !ok || !d.Equal(fd) {
					t.Fatalf("the batch's deadline %v, %v; want the latest, %v", d, ok, fd)
				}
			}
		})
	}
}

func TestManyCallersEachGetTheirOwnResult(t *testing.T) {
	g := &Group[string, int, string]{Max: 8, Send: func(_ context.Context, key string, reqs []int) ([]string, error) {
		out := make([]string, len(reqs))
		for i, r := range reqs {
			out[i] = fmt.Sprintf("%s:%d", key, r)
		}
		return out, nil
	}}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint(i % 3)
			res, err := g.Do(context.Background(), key, i)
			if err != nil || res != fmt.Sprintf("%s:%d", key, i) {
				errs <- fmt.Errorf("call %d = %q, %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(g.lanes) != 0 {
		t.Fatalf("%d lanes left", len(g.lanes))
	}
}

func TestAShortResultFailsTheBatch(t *testing.T) {
	g := &Group[string, int, string]{Send: func(context.Context, string, []int) ([]string, error) { return nil, nil }}
	if _, err := g.Do(context.Background(), "k", 1); err == nil {
		t.Fatal("a Send that returned no result gave no error")
	}
}

func TestAloneSendsEachCallAtOnce(t *testing.T) {
	gt := newGate()
	g := &Group[string, int, string]{Send: gt.send, Alone: true}
	a := start(context.Background(), g, "k", 1)
	b := start(context.Background(), g, "k", 2)
	waitFor(t, "both calls sent, neither queued", func() bool { return len(gt.sent()) == 2 })
	gt.release <- struct{}{}
	gt.release <- struct{}{}
	if oa, ob := <-a, <-b; oa.res != "k:1" || ob.res != "k:2" {
		t.Fatalf("a = %+v, b = %+v", oa, ob)
	}
	if len(g.lanes) != 0 {
		t.Fatal("a Group that sends each call alone keeps lanes")
	}
}
