package adaptive_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// newLimiter returns a Limiter on b for a key of the test's own, with cfg
// (its Key set).
func newLimiter(t *testing.T, b *redistest.Backend, cfg adaptive.Config) (*adaptive.Limiter, string) {
	t.Helper()
	cfg.Key = b.Key(t, "adaptive-test:")
	t.Cleanup(func() {
		keys, _ := adaptive.Keys(cfg.Key)
		b.Client.Del(context.Background(), keys...)
	})
	return newLimiterOn(t, b.Client, cfg), cfg.Key
}

func newLimiterOn(t *testing.T, client redis.UniversalClient, cfg adaptive.Config) *adaptive.Limiter {
	t.Helper()
	l, err := adaptive.New(client, cfg)
	require.NoError(t, err)
	return l
}

// limitOf returns l's limit.
func limitOf(t *testing.T, l *adaptive.Limiter) int64 {
	t.Helper()
	n, err := l.Limit(context.Background())
	require.NoError(t, err)
	return n
}

// inUse returns the slots in use on l's key.
func inUse(t *testing.T, l *adaptive.Limiter) int64 {
	t.Helper()
	info, err := l.Inspect(context.Background())
	require.NoError(t, err)
	return info.InUse
}

// take takes n slots of l with TryAcquire.
func take(t *testing.T, l *adaptive.Limiter, n int) []*adaptive.Slot {
	t.Helper()
	slots := make([]*adaptive.Slot, n)
	for i := range slots {
		s, err := l.TryAcquire(context.Background())
		require.NoError(t, err, "slot %d", i)
		slots[i] = s
	}
	return slots
}

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []observe.Event
}

func (r *recorder) Observe(_ context.Context, e observe.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// of returns the events of kind.
func (r *recorder) of(kind observe.Kind) []observe.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []observe.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// eventually waits up to d for cond.
func eventually(t *testing.T, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
