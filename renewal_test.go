package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// No renewal of any kind moves a deadline earlier: a holder that took its
// lease for an hour keeps it for an hour, whatever a Limiter with a
// shorter TTL on the same key does with it, on every path of the acquire
// script (the commonest calls, a weighted or fair or waiting call, and a
// batch), and ExpiresAt reports the deadline the lease keeps.
func TestRenewalNeverShortensLease(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		long := newLimiter(t, b, key, 4, time.Hour)
		short := newLimiter(t, b, key, 4, time.Second)
		fairShort := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: 4, TTL: time.Second, Fair: true})

		deadline := func(holder string) time.Time {
			for _, h := range mustHolders(t, long) {
				if h.ID == holder {
					return h.ExpiresAt
				}
			}
			t.Fatalf("%s holds no lease", holder)
			return time.Time{}
		}
		steps := []struct {
			name  string
			renew func(holder string) (time.Time, error)
		}{
			{"TryAcquire", func(h string) (time.Time, error) { r, err := short.TryAcquire(ctx, h); return r.ExpiresAt, err }},
			{"TryAcquireN", func(h string) (time.Time, error) { r, err := short.TryAcquireN(ctx, h, 2); return r.ExpiresAt, err }},
			{"Acquire", func(h string) (time.Time, error) { r, err := short.Acquire(ctx, h); return r.ExpiresAt, err }},
			{"fair TryAcquire", func(h string) (time.Time, error) { r, err := fairShort.TryAcquire(ctx, h); return r.ExpiresAt, err }},
			{"TryAcquireBatch", func(h string) (time.Time, error) {
				rs, err := short.TryAcquireBatch(ctx, []string{h, h + "-other"})
				if err != nil {
					return time.Time{}, err
				}
				return rs[0].ExpiresAt, nil
			}},
			{"Renew", func(h string) (time.Time, error) { err := short.Renew(ctx, h); return deadline(h), err }},
		}
		for i, step := range steps {
			holder := fmt.Sprintf("d%d", i)
			res, err := long.TryAcquire(ctx, holder)
			require.NoError(t, err)
			require.True(t, res.Acquired)
			took := deadline(holder)

			got, err := step.renew(holder)
			require.NoError(t, err, step.name)
			assert.False(t, deadline(holder).Before(took), "%s moved the deadline of %s earlier", step.name, holder)
			assert.False(t, got.Before(took), "%s reports a deadline earlier than the lease keeps", step.name)

			err = long.Release(ctx, holder)
			require.NoError(t, err)
			err = long.Release(ctx, holder+"-other")
			if !errors.Is(err, slotlimit.ErrNotHeld) {
				require.NoError(t, err)
			}
		}
	})
}
