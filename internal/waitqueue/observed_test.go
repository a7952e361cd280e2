package waitqueue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// An observed wait reports Waited when a try was refused, HandedOver when
// it returns with a hand-off, and nothing when its first try is done; the
// call's final event stays its caller's.
func TestObservedReportsTheWait(t *testing.T) {
	ctx, client, site := subscribed(t)
	for i, s := range []struct {
		name   string
		queued bool // the first try is refused, and a release hands it over
		kinds  []observe.Kind
	}{
		{"done at once", false, []observe.Kind{}},
		{"handed over", true, []observe.Kind{observe.Waited, observe.HandedOver}},
	} {
		rec := &observetest.Recorder{}
		c := observe.Begin(rec, "test", "Acquire", "k", "h", 1, 1)
		name := fmt.Sprintf("observed-%d", i)
		err := waitqueue.Observed(ctx, &c, site, channel, name, waitqueue.Steps{
			Try: func(ctx context.Context) (waitqueue.Try, error) {
				if !s.queued {
					return waitqueue.Try{Done: true}, nil
				}
				now := time.Now()
				payload := fmt.Sprintf("*%d:%d:%d:7:5:%s", now.UnixMilli(), now.Add(waitqueue.EntryTTL).UnixMilli(), now.Add(time.Minute).UnixMilli(), name)
				require.NoError(t, client.Publish(ctx, channel, payload).Err())
				return waitqueue.Try{Arrival: 5, Lapse: time.Minute, Clock: now}, nil
			},
			Take: func(h waitqueue.Handed) (bool, error) { return true, nil },
		})
		require.NoError(t, err, "step %d: %s", i, s.name)
		assert.Equal(t, s.kinds, observetest.Kinds(rec.Take()), "step %d: %s", i, s.name)
	}
}

// An observed wait whose context ends mid-try returns ctx's error, not
// the try's: it left the queue.
func TestObservedPrefersTheContextsError(t *testing.T) {
	ctx, _, site := subscribed(t)
	ctx, cancel := context.WithCancel(ctx)
	left := false
	c := observe.Begin(nil, "test", "Acquire", "k", "h", 1, 1)
	err := waitqueue.Observed(ctx, &c, site, channel, "cancelled", waitqueue.Steps{
		Try: func(ctx context.Context) (waitqueue.Try, error) {
			cancel()
			return waitqueue.Try{}, callerr.Sent(errors.New("cut"), true)
		},
		Take:  func(h waitqueue.Handed) (bool, error) { return true, nil },
		Leave: func(ctx context.Context) { left = true },
	})
	assert.Equal(t, context.Canceled, err)
	assert.True(t, left, "the waiter left the queue")
}

func TestHandOff(t *testing.T) {
	client := redis.NewClient(&redis.Options{})
	defer client.Close()
	assert.Equal(t, "publish 3000 {k}/free", waitqueue.HandOff(client, "{k}/free"))
	cluster := redis.NewClusterClient(&redis.ClusterOptions{})
	defer cluster.Close()
	assert.Equal(t, "spublish 3000 {k}/free", waitqueue.HandOff(cluster, "{k}/free"))
}
