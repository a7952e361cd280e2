package delayqueue_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// The environment a child reads, beside redistest's.
const (
	childKeyEnv = "SLOTLIMIT_DQ_KEY"        // the queue's key
	childVisEnv = "SLOTLIMIT_DQ_VISIBILITY" // its Visibility
)

const (
	loadChildren  = 3
	loadConsumers = 8 // per child
	loadMessages  = 10_000
	// miniredis runs each script in a Lua interpreter written in Go, some
	// 20 times slower than Redis: it gets fewer messages, and lateness is
	// bounded on the real servers only.
	loadMessagesMiniredis = 1_000
	loadSpread            = 3 * time.Second // delays are random in [0, loadSpread)
	loadBatch             = 100
)

func startQueueChild(t *testing.T, b *redistest.Backend, test, role, key string, vis time.Duration) *redistest.Child {
	return redistest.StartChild(t, b.Target(), test, role, childKeyEnv+"="+key, childVisEnv+"="+vis.String())
}

func childQueue(t *testing.T, pool int) (context.Context, redis.UniversalClient, *delayqueue.Queue) {
	ctx, client := redistest.ChildSetup(t, pool)
	vis, err := time.ParseDuration(os.Getenv(childVisEnv))
	require.NoError(t, err)
	return ctx, client, newQueueOn(t, client, delayqueue.Config{Key: os.Getenv(childKeyEnv), Visibility: vis})
}

// doneKey is set by the parent once every message is pushed.
func doneKey(key string) string { return "{" + key + "}/test-done" }

// followClock moves a miniredis clock with the wall clock, in steps of a
// millisecond, until the returned stop is called; a real server's clock
// moves by itself.
func followClock(b *redistest.Backend) (stop func()) {
	if b.Real {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			now := time.Now()
			b.Advance(now.Sub(last))
			last = now
		}
	}()
	return func() { close(done); wg.Wait() }
}

// countNotices counts the messages published on a notice channel from now
// until the returned function is called, which returns the count.
func countNotices(t *testing.T, b *redistest.Backend, channel string) func() int64 {
	ctx := context.Background()
	var ps *redis.PubSub
	if cluster, ok := b.Client.(*redis.ClusterClient); ok {
		ps = cluster.SSubscribe(ctx, channel)
	} else {
		ps = b.Client.Subscribe(ctx, channel)
	}
	_, err := ps.Receive(ctx) // the subscription's confirmation
	require.NoError(t, err)
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ps.Channel() {
			n.Add(1)
		}
	}()
	return func() int64 {
		ps.Close()
		<-done
		return n.Load()
	}
}

// subscribers counts the connections subscribed to a notice channel.
func subscribers(t *testing.T, b *redistest.Backend, channel string) int64 {
	ctx := context.Background()
	var counts map[string]int64
	var err error
	if cluster, ok := b.Client.(*redis.ClusterClient); ok {
		var node *redis.Client
		if node, err = cluster.MasterForKey(ctx, channel); err == nil {
			counts, err = node.PubSubShardNumSub(ctx, channel).Result()
		}
	} else {
		counts, err = b.Client.PubSubNumSub(ctx, channel).Result()
	}
	require.NoError(t, err)
	return counts[channel]
}

// 3 processes × 8 consumers and 10,000 messages with random delays: every
// message is acked exactly once, none is delivered before its due time by
// the server's clock, and how late each is is measured.
func TestLoadAcrossProcesses(t *testing.T) {
	if redistest.ChildRole() == "consumer" {
		consumerChild(t)
		return
	}
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const vis = 10 * time.Second
		q := newQueue(t, b, vis, 0)
		key := q.Config().Key
		t.Cleanup(func() { b.Client.Del(ctx, doneKey(key)) })
		stop := followClock(b)
		defer stop()
		children := make([]*redistest.Child, loadChildren)
		for i := range children {
			children[i] = startQueueChild(t, b, "TestLoadAcrossProcesses", "consumer", key, vis)
		}
		for _, c := range children {
			c.Await(t, "consumer-ready", 20*time.Second)
		}
		// Each child's notice subscription is confirmed: until it is, its
		// consumers poll every 100ms at most, as notices may be lost.
		require.Eventually(t, func() bool { return subscribers(t, b, sideKey(key, "wake")) == loadChildren },
			10*time.Second, 5*time.Millisecond, "the children subscribe")
		notices := countNotices(t, b, sideKey(key, "wake"))
		messages := loadMessages
		if !b.Real {
			messages = loadMessagesMiniredis
		}
		start := time.Now()
		for i := 0; i < messages; i += loadBatch {
			jobs := make([]delayqueue.Job, loadBatch)
			for j := range jobs {
				jobs[j] = delayqueue.Job{Payload: []byte(strconv.Itoa(i + j)), Delay: rand.N(loadSpread)}
			}
			_, err := q.PushBatch(ctx, jobs)
			require.NoError(t, err)
			time.Sleep(10 * time.Millisecond) // pushes spread over a second
		}
		pushed := time.Since(start)
		require.NoError(t, b.Client.Set(ctx, doneKey(key), "1", time.Minute).Err())

		acked := make([]int, messages)
		var lateness []int
		for _, c := range children {
			fields := strings.Fields(c.Await(t, "consumer-done: ", 45*time.Second))
			require.Len(t, fields, 3, c.Transcript())
			assert.Equal(t, "0", fields[1], "Ack errors other than ErrNotHeld\n%s", c.Transcript())
			for _, entry := range strings.Split(fields[2], ",") {
				if entry == "" {
					continue
				}
				idx, late, _ := strings.Cut(entry, ":")
				i, err1 := strconv.Atoi(idx)
				l, err2 := strconv.Atoi(late)
				require.NoError(t, errors.Join(err1, err2), entry)
				acked[i]++
				lateness = append(lateness, l)
			}
		}
		took := time.Since(start)
		for i, n := range acked {
			if n != 1 {
				t.Errorf("message %d acked %d times", i, n)
			}
		}
		slices.Sort(lateness)
		require.Len(t, lateness, messages)
		assert.GreaterOrEqual(t, lateness[0], 0, "a message was delivered before it was due")
		p50, p99, worst := lateness[len(lateness)/2], lateness[len(lateness)*99/100], lateness[len(lateness)-1]
		t.Logf("%s: %d messages, %d×%d consumers, in %v; lateness by the server's clock: p50 %dms, p99 %dms, max %dms",
			b.Name, messages, loadChildren, loadConsumers, took.Round(time.Millisecond), p50, p99, worst)
		woken := notices()
		t.Logf("%s: %d wake notices", b.Name, woken)
		if b.Real {
			// Notices flow under load: the pushes, and the woken consumers
			// after them, send them on the wake channel, to which every
			// child is subscribed (above). How many depends on how often
			// a consumer is idle when a message falls due, which a busy
			// machine makes rare (its consumers then never catch up and
			// never wait); that each push wakes one waiting consumer is
			// TestPushWakesOneConsumer's.
			assert.Positive(t, woken, "consumers are woken by notices")
			// The lateness itself is measured by bench/cmd/costbench. Here
			// only a gross failure shows: a machine too busy to run the
			// consumers as messages fall due makes them late by its
			// stalls, which no bound of a second can tell from a consumer
			// asleep until its fallback; a lost message, or one left to
			// its lease, is late by far more.
			backlog := max(0, took-pushed-loadSpread).Milliseconds()
			assert.Less(t, int64(p99), 5000+backlog, "p99 lateness beyond the backlog (%dms)", backlog)
		}
		assert.Empty(t, existing(t, b, key), "an empty queue leaves no keys")
	})
}

// consumerChild runs loadConsumers consumers, each Poll then Ack, until
// the parent has pushed everything and the queue is empty, and prints
// "consumer-done: acks errors index:lateness ms,...".
func consumerChild(t *testing.T) {
	ctx, client, q := childQueue(t, loadConsumers+8)
	key := q.Config().Key
	vis := q.Config().Visibility
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var out []string
	var errs atomic.Int64
	var wg sync.WaitGroup
	for range loadConsumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := q.Poll(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs.Add(1)
					fmt.Println("poll error:", err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				late := m.Deadline.Add(-vis).Sub(m.DueAt).Milliseconds()
				if err := q.Ack(ctx, m); err != nil {
					if !errors.Is(err, delayqueue.ErrNotHeld) {
						errs.Add(1)
					}
					fmt.Println("ack error:", err)
					continue
				}
				mu.Lock()
				out = append(out, string(m.Payload)+":"+strconv.FormatInt(late, 10))
				mu.Unlock()
			}
		}()
	}
	fmt.Println("consumer-ready")
	for ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		ready, delayed, inflight, _, err := q.Len(ctx)
		if err == nil && ready+delayed+inflight == 0 && client.Exists(ctx, doneKey(key)).Val() == 1 {
			break
		}
	}
	cancel()
	wg.Wait()
	fmt.Printf("consumer-done: %d %d %s\n", len(out), errs.Load(), strings.Join(out, ","))
}

// A consumer killed with kill -9 while it holds a message: the message is
// delivered again, with Attempt 2, once its lease lapses, and not before,
// by the server's clock: the new lease runs from a delivery at or after
// the first lease's deadline, which the holder prints.
func TestKilledConsumerRedelivered(t *testing.T) {
	if redistest.ChildRole() == "holder" {
		holderChild(t)
		return
	}
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		const vis = time.Second
		q := newQueue(t, b, vis, 0)
		key := q.Config().Key
		id, err := q.Push(ctx, []byte("mid-message"), 0)
		require.NoError(t, err)
		holder := startQueueChild(t, b, "TestKilledConsumerRedelivered", "holder", key, vis)
		held := strings.Fields(holder.Await(t, "holding: ", 20*time.Second))
		require.Len(t, held, 2, "an ID and a deadline")
		require.Equal(t, id, held[0])
		deadline, err := strconv.ParseInt(held[1], 10, 64)
		require.NoError(t, err)
		first := time.UnixMilli(deadline) // the held lease's, on the server's clock
		require.NoError(t, holder.Cmd.Process.Kill())
		killed := time.Now()

		if !b.Real { // the clock stands still until moved: the lease lives on
			_, err = pollWithin(t, q, vis/2)
			require.ErrorIs(t, err, context.DeadlineExceeded, "its lease still lives")
			b.Advance(first.Sub(b.Now()))
		}
		// On a real server this Poll begins while the lease lives, on a busy
		// machine too, unless the lease lapsed already.
		m, err := pollWithin(t, q, vis+deliveredWithin)
		require.NoError(t, err)
		took := time.Since(killed)
		assert.Equal(t, id, m.ID)
		assert.Equal(t, 2, m.Attempt)
		assert.False(t, m.Deadline.Before(first.Add(vis)), "delivered again at %v, before the lease lapsed at %v", m.Deadline.Add(-vis), first)
		t.Logf("%s: delivered again %v after the kill, lease %v", b.Name, took.Round(time.Millisecond), vis)
		require.NoError(t, q.Ack(ctx, m))
	})
}

func holderChild(t *testing.T) {
	ctx, _, q := childQueue(t, 4)
	m, err := q.Poll(ctx)
	require.NoError(t, err)
	fmt.Printf("holding: %s %d\n", m.ID, m.Deadline.UnixMilli())
	<-ctx.Done()
}
