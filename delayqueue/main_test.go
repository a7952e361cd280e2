package delayqueue_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// newQueue returns a Queue for a key of the test's own on b, with
// visibility and max attempts; its keys are deleted when t ends.
func newQueue(t *testing.T, b *redistest.Backend, visibility time.Duration, maxAttempts int) *delayqueue.Queue {
	t.Helper()
	key := b.Key(t, "dq-test:")
	t.Cleanup(func() { b.Client.Del(context.Background(), allKeys(key)...) })
	return newQueueOn(t, b.Client, delayqueue.Config{Key: key, Visibility: visibility, MaxAttempts: maxAttempts})
}

func newQueueOn(t *testing.T, client redis.UniversalClient, cfg delayqueue.Config) *delayqueue.Queue {
	t.Helper()
	q, err := delayqueue.New(client, cfg)
	require.NoError(t, err)
	return q
}

// sideKeys are the keys a queue at key keeps beside its sorted set.
func sideKeys(key string) []string {
	var keys []string
	for _, suffix := range []string{"leases", "bodies", "attempts", "dead", "waiters", "info", "pushes"} {
		keys = append(keys, sideKey(key, suffix))
	}
	return keys
}

// sideKey is the name of the queue's key, or channel, with suffix.
func sideKey(key, suffix string) string { return queueKey(key) + ":" + suffix }

// existing returns the queue's keys that exist, waiters aside.
func existing(t *testing.T, b *redistest.Backend, key string) []string {
	t.Helper()
	var found []string
	for _, k := range allKeys(key) {
		if k[len(k)-len("waiters"):] == "waiters" {
			continue
		}
		if b.Client.Exists(context.Background(), k).Val() == 1 {
			found = append(found, k)
		}
	}
	return found
}

// deliveredWithin bounds the wait for a message that is due, or comes due
// at once: a bound for gross failures, which a busy machine does not reach.
const deliveredWithin = 10 * time.Second

// pollWithin polls with a timeout.
func pollWithin(t *testing.T, q *delayqueue.Queue, within time.Duration) (delayqueue.Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return q.Poll(ctx)
}

// queueKey is the name of the sorted set of the queue at key: the key,
// or the key wrapped in a hash tag, and the package's name.
func queueKey(key string) string {
	if strings.Contains(key, "{") {
		return key + ":delayqueue"
	}
	return "{" + key + "}/delayqueue"
}

// allKeys are every key of the queue at key.
func allKeys(key string) []string { return append([]string{queueKey(key)}, sideKeys(key)...) }
