package waitqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A wait returns only what the waiter still holds when it returns, by the
// server's clock: a hand-off that Take held, but that was no longer held
// for the waiter by the time Take returned (a claim whose WAIT was slow,
// a process stopped as it took the notice), and a try done so late after
// it was sent that its lease may have lapsed, are not returned; the
// waiter tries again. Accept hears only of the hand-off the wait returns
// with.
func TestWaitReturnsOnlyWhatIsStillHeld(t *testing.T) {
	ctx, client, site := subscribed(t)
	const lease = 300 * time.Millisecond
	steps := []struct {
		name     string
		held     time.Duration // how long the hand-off holds it, from the try
		take     time.Duration // how long Take takes
		tryTakes time.Duration // how long a try that is done takes
		tryLease time.Duration // the lease a done try reports
		tries    int           // the tries the wait makes
		accepted bool          // Accept hears of the hand-off
	}{
		{"hand-off taken in time", waitqueue.EntryTTL, 0, -1, 0, 1, true},
		{"hand-off held until after Take", lease, lease + 100*time.Millisecond, 0, lease, 2, false},
		{"done try in time", 0, 0, 0, lease, 1, false},
		{"done try past its lease", 0, 0, lease + 100*time.Millisecond, lease, 2, false},
		{"done try past its lease, no lease stated", 0, 0, lease + 100*time.Millisecond, 0, 1, false},
	}
	for i, s := range steps {
		name := fmt.Sprintf("holder-%d", i)
		tries, takes, accepted := 0, 0, 0
		err := waitqueue.Run(ctx, site, channel, name, waitqueue.Steps{
			Try: func(ctx context.Context) (waitqueue.Try, error) {
				tries++
				switch {
				case tries > 1:
					return waitqueue.Try{Done: true, Lease: s.tryLease}, nil
				case s.held == 0:
					time.Sleep(s.tryTakes)
					return waitqueue.Try{Done: true, Lease: s.tryLease}, nil
				}
				// Queued, as the server's clock read now; a release hands
				// it what it waits for at once.
				now := time.Now()
				payload := fmt.Sprintf("*%d:%d:%d:7:5:%s", now.UnixMilli(), now.Add(s.held).UnixMilli(), now.Add(time.Minute).UnixMilli(), name)
				require.NoError(t, client.Publish(ctx, channel, payload).Err())
				return waitqueue.Try{Arrival: 5, Lapse: time.Minute, Clock: now}, nil
			},
			Take: func(h waitqueue.Handed) (bool, error) {
				takes++
				time.Sleep(s.take)
				return true, nil
			},
			Accept: func(h waitqueue.Handed) {
				accepted++
				assert.Equal(t, int64(7), h.Value, "step %d: %s", i, s.name)
			},
		})
		require.NoError(t, err, "step %d: %s", i, s.name)
		assert.Equal(t, s.tries, tries, "step %d: %s: tries", i, s.name)
		want := 0
		if s.accepted {
			want = 1
		}
		assert.Equal(t, want, accepted, "step %d: %s: hand-offs accepted", i, s.name)
		if s.held > 0 {
			assert.Equal(t, 1, takes, "step %d: %s: hand-offs taken", i, s.name)
		}
	}
}
