package delayqueue_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
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

// ledger records, per message, its confirmed push, its successful acks,
// and its acks whose outcome is unknown: an Ack whose connection broke
// after it was sent may have removed the message without its caller
// learning so.
type ledger struct {
	mu       sync.Mutex
	pushed   map[string]bool
	acked    map[string]int
	unknown  map[string]int
	attempts map[string]int // the highest Attempt delivered
}

func newLedger() *ledger {
	return &ledger{pushed: map[string]bool{}, acked: map[string]int{}, unknown: map[string]int{}, attempts: map[string]int{}}
}

func (l *ledger) delivered(m delayqueue.Message) {
	l.mu.Lock()
	l.attempts[string(m.Payload)] = max(l.attempts[string(m.Payload)], m.Attempt)
	l.mu.Unlock()
}

func (l *ledger) push(payload string) { l.mu.Lock(); l.pushed[payload] = true; l.mu.Unlock() }
func (l *ledger) ack(payload string)  { l.mu.Lock(); l.acked[payload]++; l.mu.Unlock() }
func (l *ledger) lost(payload string) { l.mu.Lock(); l.unknown[payload]++; l.mu.Unlock() }

// check asserts that every confirmed push was acked, and none twice. A
// message acked by no call that returned may have been acked by one whose
// outcome is unknown; the queue, drained, no longer holds it.
func (l *ledger) check(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.pushed {
		if l.acked[p] == 0 && l.unknown[p] > 0 {
			continue
		}
		assert.Equal(t, 1, l.acked[p], "message %s", p)
	}
	for p, n := range l.acked {
		assert.LessOrEqual(t, n, 1, "message %s acked twice", p)
	}
}

// consume runs consumers that Poll and Ack into l until ctx ends, and
// counts the calls that failed.
func consume(ctx context.Context, q *delayqueue.Queue, consumers int, l *ledger, failed *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				m, err := q.Poll(ctx)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
						time.Sleep(20 * time.Millisecond)
					}
					continue
				}
				l.delivered(m)
				switch err := q.Ack(context.WithoutCancel(ctx), m); {
				case err == nil:
					l.ack(string(m.Payload))
				case !errors.Is(err, delayqueue.ErrNotHeld):
					failed.Add(1)
					l.lost(string(m.Payload))
				}
			}
		}()
	}
	return &wg
}

// drained waits until q holds no message, or within has passed.
func drained(t *testing.T, q *delayqueue.Queue, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ready, delayed, inflight, _, err := q.Len(context.Background())
		if err == nil && ready+delayed+inflight == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained within %v: %d ready, %d delayed, %d in flight, %v", within, ready, delayed, inflight, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SCRIPT FLUSH every 2ms while 500 messages are pushed and consumed: no
// call fails (NOSCRIPT is answered with EVAL), and every message is acked
// once.
func TestScriptFlushUnderLoad(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stopClock := followClock(b)
		defer stopClock()
		q := newQueue(t, b, 10*time.Second, 0)
		flush := func() error {
			if cluster, ok := b.Client.(*redis.ClusterClient); ok {
				return cluster.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
					return m.ScriptFlush(ctx).Err()
				})
			}
			return b.Client.ScriptFlush(ctx).Err()
		}
		var flushes atomic.Int64
		go func() {
			for ctx.Err() == nil {
				time.Sleep(2 * time.Millisecond)
				if flush() == nil {
					flushes.Add(1)
				}
			}
		}()
		l := newLedger()
		var failed atomic.Int64
		wg := consume(ctx, q, 4, l, &failed)
		for i := range 500 {
			payload := strconv.Itoa(i)
			_, err := q.Push(ctx, []byte(payload), rand.N(200*time.Millisecond))
			require.NoError(t, err)
			l.push(payload)
		}
		drained(t, q, 20*time.Second)
		cancel()
		wg.Wait()
		assert.Zero(t, failed.Load(), "failed calls")
		assert.Positive(t, flushes.Load())
		l.check(t)
	})
}

// A Redis restart under load, with every write on disk before its reply
// (appendonly, fsync always): calls fail while it is down; after, every
// message whose push was confirmed is acked, and none twice.
func TestRedisRestartUnderLoad(t *testing.T) {
	s := redistest.StartServer(t, "--appendonly", "yes", "--appendfsync", "always")
	// One dial attempt per call: go-redis's default of five, 100ms apart,
	// would carry a call across the outage instead of failing it.
	client := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := newQueueOn(t, client, delayqueue.Config{Key: "dq-test:restart", Visibility: 2 * time.Second})
	l := newLedger()
	var failed atomic.Int64
	wg := consume(ctx, q, 8, l, &failed)
	var pushFailed atomic.Int64
	var pushers sync.WaitGroup
	pushers.Add(1)
	go func() {
		defer pushers.Done()
		deadline := time.Now().Add(2 * time.Second)
		for i := 0; i < 4000 && time.Now().Before(deadline); i++ {
			payload := strconv.Itoa(i)
			if _, err := q.Push(ctx, []byte(payload), rand.N(300*time.Millisecond)); err != nil {
				pushFailed.Add(1)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			l.push(payload)
			time.Sleep(500 * time.Microsecond)
		}
	}()
	time.Sleep(700 * time.Millisecond)
	s.Kill()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, s.Restart())
	pushers.Wait()
	drained(t, q, 15*time.Second)
	cancel()
	wg.Wait()
	assert.Positive(t, pushFailed.Load()+failed.Load(), "calls failed while Redis was down")
	t.Logf("%d pushes confirmed, %d failed; %d consumer calls failed", len(l.pushed), pushFailed.Load(), failed.Load())
	l.check(t)
}

// CLIENT KILL every 150ms while messages are pushed and consumed through
// clients with go-redis's default retries, which send again each call
// whose connection was cut: no push queues its message twice, no attempt
// is spent on a delivery nobody got, and every message whose push was
// confirmed is acked once.
func TestClientKillUnderLoad(t *testing.T) {
	s := redistest.StartServer(t)
	client := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := newQueueOn(t, client, delayqueue.Config{Key: "dq-test:kill", Visibility: 5 * time.Second})
	l := newLedger()
	var failed atomic.Int64
	wg := consume(ctx, q, 4, l, &failed)
	go func() {
		killer := redis.NewClient(&redis.Options{Addr: s.Addr})
		defer killer.Close()
		for ctx.Err() == nil {
			time.Sleep(150 * time.Millisecond)
			killer.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes")
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	pushFailed := 0
	for i := 0; i < 1500 && time.Now().Before(deadline); i++ {
		payload := strconv.Itoa(i)
		// Due later than go-redis's retries take, so that no message is
		// acked between a push's two runs (see Push).
		if _, err := q.Push(ctx, []byte(payload), time.Second); err != nil {
			pushFailed++
			continue
		}
		l.push(payload)
	}
	drained(t, q, 20*time.Second)
	cancel()
	wg.Wait()
	conns, err := client.InfoMap(context.Background(), "stats").Result()
	require.NoError(t, err)
	t.Logf("%d pushes confirmed, %d failed; %d consumer calls failed; %s connections made",
		len(l.pushed), pushFailed, failed.Load(), conns["Stats"]["total_connections_received"])
	l.check(t)
	for p, n := range l.attempts {
		assert.Equal(t, 1, n, "message %s: delivered on attempt %d", p, n)
	}
}
