package delayqueue_test

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

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// Concurrent Pushes, Poll calls and Acks on one Queue share script calls
// (Config.DisableCoalescing): each caller still gets the answer its call
// alone, made in turn, would get. Each test runs rounds of concurrent
// callers until it has seen a script call that carried more than one of
// them (a crowd of goroutines started at once on a busy lane joins one),
// and checks every round's answers.

// maxRounds bounds the rounds a test runs to see a batch: a bound for
// gross failures (no batch ever formed), which a busy machine does not
// reach.
const maxRounds = 200

// A scriptHook counts the script calls of a client by script, and the
// jobs of each push.lua call.
type scriptHook struct {
	mu        sync.Mutex
	calls     map[string]int // by SHA
	pushBatch int            // push.lua calls of more than one job
}

func (h *scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) > 3 && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			sha := fmt.Sprint(args[1])
			h.mu.Lock()
			if h.calls == nil {
				h.calls = map[string]int{}
			}
			h.calls[sha]++
			// evalsha sha 8 keys... notify, then five args per job.
			if sha == delayqueue.ScriptHash("push") && len(args) > 3+8+1+5 {
				h.pushBatch++
			}
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// count returns the calls of the named script (see ScriptHash).
func (h *scriptHook) count(op string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[delayqueue.ScriptHash(op)]
}

func (h *scriptHook) pushBatches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pushBatch
}

// hookedQueue returns a Queue of cfg (its Key set to one of the test's
// own) on a client of b's whose script calls hook counts.
func hookedQueue(t *testing.T, b *redistest.Backend, cfg delayqueue.Config) (*delayqueue.Queue, *scriptHook) {
	t.Helper()
	client := b.NewClient(t)
	h := &scriptHook{}
	client.AddHook(h)
	require.NoError(t, delayqueue.LoadScripts(context.Background(), client))
	cfg.Key = b.Key(t, "dq-test:")
	t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(cfg.Key)...) })
	return newQueueOn(t, client, cfg), h
}

// together runs f(0) .. f(n-1) at once, each in a goroutine, and waits.
func together(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

// drain polls every due message of q, one at a time, and returns them by
// ID.
func drain(t *testing.T, q *delayqueue.Queue) map[string]delayqueue.Message {
	t.Helper()
	got := map[string]delayqueue.Message{}
	for {
		ready, _, _, _, err := q.Len(context.Background())
		require.NoError(t, err)
		if ready == 0 {
			return got
		}
		m, err := pollWithin(t, q, deliveredWithin)
		require.NoError(t, err)
		_, dup := got[m.ID]
		require.False(t, dup, "message %s delivered twice", m.ID)
		got[m.ID] = m
	}
}

// Concurrent pushes answer each caller as its push alone would: a minted
// ID is queued; of the pushes of one ID given by WithID or Job.ID, one
// queues it and every other gets ErrDuplicate naming it; a PushBatch
// among them is answered job by job; and each call reports its own
// Observer event. Every message queued is delivered once, with its
// payload.
func TestCoalescedPushes(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		q, h := hookedQueue(t, b, delayqueue.Config{Visibility: time.Minute, Observer: rec})
		for round := 0; round < maxRounds && (round < 2 || h.pushBatches() == 0); round++ {
			const n = 24
			type answer struct {
				ids []string
				err error
			}
			answers := make([]answer, n)
			together(n, func(i int) {
				payload := []byte(fmt.Sprintf("r%d-%d", round, i))
				shared := fmt.Sprintf("r%d-id%d", round, i%4) // four IDs, each pushed by several calls
				var a answer
				switch i % 3 {
				case 0:
					var id string
					id, a.err = q.Push(ctx, payload, 0)
					a.ids = []string{id}
				case 1:
					var id string
					id, a.err = q.Push(ctx, payload, 0, delayqueue.WithID(shared))
					a.ids = []string{id}
				default:
					a.ids, a.err = q.PushBatch(ctx, []delayqueue.Job{
						{Payload: payload},
						{Payload: payload, ID: shared},
						{Payload: payload, ID: fmt.Sprintf("r%d-own%d", round, i)},
					})
				}
				answers[i] = a
			})
			queued := map[string][]byte{} // each ID queued, and its payload
			dups := map[string]int{}      // each shared ID's duplicates
			for i, a := range answers {
				payload := []byte(fmt.Sprintf("r%d-%d", round, i))
				var dupErr *delayqueue.DuplicateError
				named := map[string]bool{}
				if a.err != nil {
					require.ErrorAs(t, a.err, &dupErr, "call %d", i)
					for _, id := range dupErr.IDs {
						named[id] = true
					}
				}
				for _, id := range a.ids {
					require.NotEmpty(t, id)
					if named[id] {
						dups[id]++
						continue
					}
					_, twice := queued[id]
					require.False(t, twice, "ID %s queued by two calls", id)
					queued[id] = payload
				}
			}
			for k := range 4 {
				id := fmt.Sprintf("r%d-id%d", round, k)
				assert.Contains(t, queued, id, "one push of %s queued it", id)
				// Calls 1, 2, 4, 5, ...: those of i%4 == k with i%3 != 0.
				pushes := 0
				for i := range n {
					if i%4 == k && i%3 != 0 {
						pushes++
					}
				}
				assert.Equal(t, pushes-1, dups[id], "every other push of %s got ErrDuplicate", id)
			}
			got := drain(t, q)
			require.Len(t, got, len(queued))
			for id, payload := range queued {
				require.Contains(t, got, id)
				assert.Equal(t, payload, got[id].Payload, "message %s", id)
				require.NoError(t, q.Ack(ctx, got[id]))
			}
			// One final event per call, under its own method's name.
			events := map[string]int{}
			for _, e := range rec.Take() {
				if e.Op == "Push" || e.Op == "PushBatch" {
					events[e.Op]++
				}
			}
			assert.Equal(t, map[string]int{"Push": 16, "PushBatch": 8}, events)
		}
		assert.Positive(t, h.pushBatches(), "a push.lua call carried the jobs of several calls")
		assert.Empty(t, existing(t, b, q.Config().Key), "an empty queue leaves no keys")
	})
}

// Concurrent Polls, of consumers that found the queue empty and wait as
// well as of those that find messages due, deliver every message once,
// to one of them, each with its own token and lease; concurrent Acks of
// those deliveries answer each as alone: nil for a delivery that holds
// its lease, nil again for one acked twice, ErrNotHeld for one given
// back. Each call reports its own Observer event, Holder its token.
func TestCoalescedPollsAndAcks(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		q, h := hookedQueue(t, b, delayqueue.Config{Visibility: time.Minute, Observer: rec})
		for round := 0; round < maxRounds && (round < 2 || h.count("polls") == 0 || h.count("acks") == 0); round++ {
			const n = 16
			// Half the consumers wait on an empty queue; then the
			// messages come, and the other half polls too.
			got := make([]delayqueue.Message, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n / 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = pollWithin(t, q, deliveredWithin)
				}()
			}
			jobs := make([]delayqueue.Job, n)
			for i := range jobs {
				jobs[i] = delayqueue.Job{Payload: []byte(fmt.Sprint(i))}
			}
			_, err := q.PushBatch(ctx, jobs)
			require.NoError(t, err)
			together(n/2, func(i int) {
				got[n/2+i], errs[n/2+i] = pollWithin(t, q, deliveredWithin)
			})
			wg.Wait()
			seen := map[string]bool{}
			tokens := map[string]bool{}
			for i, m := range got {
				require.NoError(t, errs[i], "poll %d", i)
				assert.False(t, seen[m.ID], "message %s delivered twice", m.ID)
				assert.False(t, tokens[m.Token], "token %s given twice", m.Token)
				seen[m.ID], tokens[m.Token] = true, true
				assert.Equal(t, 1, m.Attempt)
				assert.False(t, m.Deadline.IsZero())
			}
			require.Len(t, seen, n)
			assert.Equal(t, [4]int64{0, 0, n, 0}, lens(t, q))

			// The last delivery is given back first: its Ack is not held.
			require.NoError(t, q.Nack(ctx, got[n-1], time.Hour))
			acks := make([]error, n+2)
			together(n+2, func(i int) {
				m := got[i%n] // the first two are acked twice
				acks[i] = q.Ack(ctx, m)
			})
			for i, err := range acks {
				if i%n == n-1 {
					assert.ErrorIs(t, err, delayqueue.ErrNotHeld, "ack %d", i)
				} else {
					assert.NoError(t, err, "ack %d", i)
				}
			}
			assert.Equal(t, [4]int64{0, 1, 0, 0}, lens(t, q))
			m, err := pollWithin(t, q, time.Millisecond)
			require.Error(t, err, "the message given back is not due: %v", m)
			_, err = q.PushBatch(ctx, nil)
			require.NoError(t, err)

			// One Poll event per Poll, and one Ack event per Ack, each
			// naming its delivery's token.
			polled, acked := map[string]int{}, map[string]int{}
			for _, e := range rec.Take() {
				switch {
				case e.Op == "Poll" && e.Kind == observe.Acquired:
					polled[e.Holder]++
				case e.Op == "Ack":
					acked[e.Holder]++
					assert.Equal(t, e.Kind, observe.Released)
				}
			}
			for i, m := range got {
				assert.Equal(t, 1, polled[m.Token], "poll %d", i)
				want := 1
				if i < 2 {
					want = 2
				}
				assert.Equal(t, want, acked[m.Token], "acks of delivery %d", i)
			}
			// Drop the message given back, for the next round.
			require.NoError(t, b.Client.Del(ctx, allKeys(q.Config().Key)...).Err())
		}
		assert.Positive(t, h.count("polls"), "a polls.lua call carried several Polls")
		assert.Positive(t, h.count("acks"), "an acks.lua call carried several Acks")
	})
}

// With DisableCoalescing, each call is its own script call: no polls.lua
// or acks.lua call is made, and each push.lua call carries one call's
// jobs.
func TestDisableCoalescing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q, h := hookedQueue(t, b, delayqueue.Config{Visibility: time.Minute, DisableCoalescing: true})
		const n = 16
		together(n, func(i int) {
			_, err := q.Push(ctx, []byte("x"), 0)
			assert.NoError(t, err)
		})
		got := make([]delayqueue.Message, n)
		together(n, func(i int) {
			var err error
			got[i], err = pollWithin(t, q, deliveredWithin)
			assert.NoError(t, err)
		})
		together(n, func(i int) { assert.NoError(t, q.Ack(ctx, got[i])) })
		assert.Equal(t, n, h.count("push"))
		assert.Zero(t, h.pushBatches())
		assert.Zero(t, h.count("polls"))
		assert.Zero(t, h.count("acks"))
		assert.Equal(t, n, h.count("ack"))
		assert.Empty(t, existing(t, b, q.Config().Key))
	})
}

// A batch whose reply is lost, and which go-redis sends again, answers
// each of its calls as their first run did: a Push of a given ID nil,
// never ErrDuplicate, and the message queued once; a Poll the delivery
// its first run made, each message to one Poll; an Ack nil.
func TestCoalescedResent(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client, cutter := b.CutClient(t)
		require.NoError(t, delayqueue.LoadScripts(ctx, client))
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key, Visibility: time.Minute})
		const n = 12

		// Pushes: the reply cut is that of a push.lua call carrying the
		// first two calls' IDs, a batch.
		cut := false
		for round := 0; round < maxRounds && !cut; round++ {
			id := func(i int) string { return fmt.Sprintf("r%d-%d", round, i) }
			before := cutter.Cuts()
			cutter.Arm(1, "evalsha", delayqueue.ScriptHash("push"), id(0)+"\x0d", id(1)+"\x0d")
			together(n, func(i int) {
				got, err := q.Push(ctx, []byte(id(i)), 0, delayqueue.WithID(id(i)))
				assert.NoError(t, err, "push %d", i)
				assert.Equal(t, id(i), got)
			})
			cutter.Arm(0)
			cut = cutter.Cuts() > before
			msgs := drain(t, q)
			require.Len(t, msgs, n, "every message queued once")
			for _, m := range msgs {
				assert.Equal(t, m.ID, string(m.Payload))
				require.NoError(t, q.Ack(ctx, m))
			}
		}
		require.True(t, cut, "a push batch's reply was cut")

		// Polls and Acks: the reply cut is that of a polls.lua or
		// acks.lua call, which only a batch makes.
		for _, op := range []string{"polls", "acks"} {
			cut := false
			for round := 0; round < maxRounds && !cut; round++ {
				jobs := make([]delayqueue.Job, n)
				for i := range jobs {
					jobs[i] = delayqueue.Job{Payload: []byte(fmt.Sprint(i))}
				}
				_, err := q.PushBatch(ctx, jobs)
				require.NoError(t, err)
				before := cutter.Cuts()
				if op == "polls" {
					cutter.Arm(1, "evalsha", delayqueue.ScriptHash(op), key)
				}
				got := make([]delayqueue.Message, n)
				together(n, func(i int) {
					var err error
					got[i], err = pollWithin(t, q, deliveredWithin)
					assert.NoError(t, err, "poll %d", i)
				})
				seen := map[string]bool{}
				for _, m := range got {
					assert.False(t, seen[m.ID], "message %s delivered twice", m.ID)
					seen[m.ID] = true
				}
				assert.Equal(t, [4]int64{0, 0, n, 0}, lens(t, q), "every message in flight, once")
				if op == "acks" {
					cutter.Arm(1, "evalsha", delayqueue.ScriptHash(op), key)
				}
				together(n, func(i int) { assert.NoError(t, q.Ack(ctx, got[i]), "ack %d", i) })
				cutter.Arm(0)
				cut = cutter.Cuts() > before
				assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q))
			}
			require.True(t, cut, "a %s batch's reply was cut", op)
		}
		assert.Empty(t, existing(t, b, key))
	})
}

// A Push whose ctx ends while it waits for the batch in flight to return
// leaves without sending anything: its error matches the ctx's, and not
// ErrOutcomeUnknown, and its message is not queued.
func TestCoalescedLeavesUnsent(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		held, release := make(chan struct{}), make(chan struct{})
		var holding atomic.Bool
		client.AddHook(holdHook{hold: func(string) {
			if holding.CompareAndSwap(false, true) {
				close(held)
				<-release
			}
		}})
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key})
		first := make(chan error)
		go func() {
			_, err := q.Push(ctx, []byte("first"), 0)
			first <- err
		}()
		<-held // the first push is in flight, and holds the lane
		cctx, cancel := context.WithCancel(ctx)
		second := make(chan error)
		go func() {
			_, err := q.Push(cctx, []byte("second"), 0)
			second <- err
		}()
		cancel()
		err := <-second
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, delayqueue.ErrOutcomeUnknown)
		close(release)
		require.NoError(t, <-first)
		assert.Equal(t, [4]int64{1, 0, 0, 0}, lens(t, q), "only the first push was sent")
	})
}

// A holdHook calls hold with the script's SHA before each script call.
type holdHook struct{ hold func(sha string) }

func (h holdHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h holdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" && len(cmd.Args()) > 1 {
			h.hold(fmt.Sprint(cmd.Args()[1]))
		}
		return next(ctx, cmd)
	}
}

func (h holdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A Poll whose ctx ends while the batch that carries its call is in
// flight returns an error matching ErrOutcomeUnknown only once that batch
// has run, and gives back, before it returns, the message its call took:
// due again at once with no attempt spent, so another Poll takes it at
// once, as Attempt 1.
func TestCoalescedPollEndedInFlightGivesBack(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		require.NoError(t, delayqueue.LoadScripts(ctx, client))
		type held struct {
			batch   bool
			release chan struct{}
		}
		var mu sync.Mutex
		var holds chan held // while not nil, each script call is held, and sent here
		client.AddHook(holdHook{hold: func(sha string) {
			mu.Lock()
			c := holds
			mu.Unlock()
			if c != nil {
				h := held{batch: sha == delayqueue.ScriptHash("polls"), release: make(chan struct{})}
				c <- h
				<-h.release
			}
		}})
		key := b.Key(t, "dq-test:")
		t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
		q := newQueueOn(t, client, delayqueue.Config{Key: key, Visibility: time.Minute})
		seen := false
		for round := 0; round < maxRounds && !seen; round++ {
			_, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("1")}, {Payload: []byte("2")}})
			require.NoError(t, err)
			c := make(chan held)
			mu.Lock()
			holds = c
			mu.Unlock()
			polled := make(chan delayqueue.Message, 2)
			poll := func() {
				m, err := pollWithin(t, q, deliveredWithin)
				assert.NoError(t, err)
				polled <- m
			}
			go poll() // alone: its call is held, and holds the lane
			first := <-c
			actx, cancel := context.WithCancel(ctx)
			type result struct {
				m   delayqueue.Message
				err error
			}
			ended := make(chan result)
			go func() {
				m, err := q.Poll(actx)
				ended <- result{m, err}
			}()
			go poll()
			time.Sleep(10 * time.Millisecond) // let both queue: a round where they do not proves nothing, and another is run
			close(first.release)
			second := <-c
			mu.Lock()
			holds = nil
			mu.Unlock()
			cancel()
			if second.batch {
				select {
				case end := <-ended:
					t.Fatalf("the Poll returned %v while its batch was in flight", end.err)
				case <-time.After(10 * time.Millisecond):
				}
			}
			close(second.release)
			end := <-ended
			if end.err == nil {
				// A Poll whose call was sent alone, as in a round where
				// the crowd did not queue in time, may take a message
				// though its ctx ended, and return it.
				require.NoError(t, q.Ack(ctx, end.m))
				_, err = q.Push(ctx, []byte("3"), 0)
				require.NoError(t, err)
			} else if second.batch && errors.Is(end.err, delayqueue.ErrOutcomeUnknown) {
				seen = true
			}
			// Whatever the ended Poll's call took was given back: the
			// other two Polls take both messages, as first deliveries.
			for range 2 {
				m := <-polled
				assert.Equal(t, 1, m.Attempt, "message %s", m.Payload)
				require.NoError(t, q.Ack(ctx, m))
			}
			assert.Equal(t, [4]int64{0, 0, 0, 0}, lens(t, q))
		}
		assert.True(t, seen, "a Poll ended while its batch was in flight")
	})
}

// A queue that passes 32 messages keeps its bodies in a hash table, so
// that the fields its scripts read and write in a batch cost the same
// however many messages it holds; the push that makes it so fails, on a
// bodies key of another type, with WRONGTYPE and leaves every key as it
// was.
func TestBodiesKeptInHashTable(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	q := newQueue(t, b, time.Minute, 0)
	key := q.Config().Key
	bodies := sideKey(key, "bodies")
	for i := range 31 {
		_, err := q.Push(ctx, []byte{byte(i)}, time.Hour)
		require.NoError(t, err)
	}
	assert.Equal(t, "listpack", b.Client.ObjectEncoding(ctx, bodies).Val(), "a small queue pays nothing")
	_, err := q.Push(ctx, []byte("32nd"), time.Hour)
	require.NoError(t, err)
	assert.Equal(t, "hashtable", b.Client.ObjectEncoding(ctx, bodies).Val())
	n, err := b.Client.HLen(ctx, bodies).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 32, n, "'#wide' is deleted after the bodies")

	other := newQueue(t, b, time.Minute, 0)
	okey := other.Config().Key
	require.NoError(t, b.Client.HSet(ctx, sideKey(okey, "info"), "seq", 31).Err())
	require.NoError(t, b.Client.Set(ctx, sideKey(okey, "bodies"), "x", 0).Err())
	_, err = other.Push(ctx, []byte("p"), 0)
	require.ErrorContains(t, err, "WRONGTYPE")
	assert.Equal(t, "31", b.Client.HGet(ctx, sideKey(okey, "info"), "seq").Val())
	assert.Equal(t, "x", b.Client.Get(ctx, sideKey(okey, "bodies")).Val())
	assert.Zero(t, b.Client.Exists(ctx, queueKey(okey)).Val())
}

// Bad input is refused before a call joins a batch: among concurrent
// pushes and acks, those refused get ErrInvalidArgument or
// ErrInvalidConfig, and every other call is answered as alone.
func TestCoalescedBadInputFailsNoOneElse(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		q, _ := hookedQueue(t, b, delayqueue.Config{Visibility: time.Minute})
		const n = 16
		errs := make([]error, n)
		together(n, func(i int) {
			switch i % 4 {
			case 1:
				_, errs[i] = q.Push(ctx, []byte("bad"), -time.Second)
			case 2:
				_, errs[i] = q.Push(ctx, []byte("bad"), 0, delayqueue.WithID("#bad"))
			default:
				_, errs[i] = q.Push(ctx, []byte("good"), 0)
			}
		})
		for i, err := range errs {
			if i%4 == 1 || i%4 == 2 {
				assert.ErrorIs(t, err, delayqueue.ErrInvalidArgument, "push %d", i)
			} else {
				assert.NoError(t, err, "push %d", i)
			}
		}
		assert.Equal(t, [4]int64{n / 2, 0, 0, 0}, lens(t, q))
		got := make([]delayqueue.Message, n/2)
		for i := range got {
			var err error
			got[i], err = pollWithin(t, q, deliveredWithin)
			require.NoError(t, err)
		}
		together(n, func(i int) {
			if i%2 == 1 {
				errs[i] = q.Ack(ctx, delayqueue.Message{ID: got[i/2].ID}) // no token: not made by Poll
			} else {
				errs[i] = q.Ack(ctx, got[i/2])
			}
		})
		for i, err := range errs {
			if i%2 == 1 {
				assert.ErrorIs(t, err, delayqueue.ErrInvalidConfig, "ack %d", i)
			} else {
				assert.NoError(t, err, "ack %d", i)
			}
		}
		assert.Empty(t, existing(t, b, q.Config().Key))
	})
}

// A key of another type fails a batch of Poll calls, or of Acks, with
// WRONGTYPE before it writes anything: every key is left as it was. The
// batches are those of consumers that wait and of those that do not, with
// messages due and deliveries to ack.
func TestCoalescedWrongTypeLeavesKeysUntouched(t *testing.T) {
	b := redistest.Redis(t)
	ctx := context.Background()
	for _, which := range []string{"queue", "leases", "bodies", "attempts", "dead", "waiters", "info", "pushes"} {
		for _, waiting := range []bool{false, true} {
			q := newQueue(t, b, time.Minute, 0)
			key := q.Config().Key
			_, err := q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("1")}, {Payload: []byte("2")}})
			require.NoError(t, err)
			m1, err := q.Poll(ctx)
			require.NoError(t, err)
			m2, err := q.Poll(ctx)
			require.NoError(t, err)
			// A waiter, the keeper, and one message due, for the batch:
			// one call takes it, the others find nothing.
			_, err = delayqueue.PollBatch(ctx, q, true, "w1")
			require.NoError(t, err)
			_, err = q.Push(ctx, []byte("3"), 0, delayqueue.WithID("three"))
			require.NoError(t, err)
			k := queueKey(key)
			if which != "queue" {
				k = sideKey(key, which)
			}
			require.NoError(t, b.Client.Del(ctx, k).Err())
			require.NoError(t, b.Client.RPush(ctx, k, "x").Err())
			before := dumps(t, b, key)

			_, err = delayqueue.PollBatch(ctx, q, waiting, "t1", "t2", "t3")
			if err != nil {
				assert.ErrorContains(t, err, "WRONGTYPE", "%s, waiting %v", which, waiting)
				assert.Equal(t, before, dumps(t, b, key), "%s, waiting %v: a failed poll batch wrote nothing", which, waiting)
			}
			before = dumps(t, b, key)
			_, err = delayqueue.AckBatch(ctx, q, m1, m2)
			if err != nil {
				assert.ErrorContains(t, err, "WRONGTYPE", "%s", which)
				assert.Equal(t, before, dumps(t, b, key), "%s: a failed ack batch wrote nothing", which)
			}
		}
	}
}

// dumps returns the DUMP of each of the queue's keys.
func dumps(t *testing.T, b *redistest.Backend, key string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range allKeys(key) {
		out[k] = b.Client.Dump(context.Background(), k).Val()
	}
	return out
}
