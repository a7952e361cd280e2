package redpacket_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// A Store's keys all carry its shard's own hash tag, "{Prefix:n}", which
// no key another package makes of the string Prefix, or of the shard's
// tag itself, is: a Limiter and a recent list given those strings, beside
// a Store whose Prefix is the same, neither read nor change its packets,
// and it neither reads nor changes their holders or items.
func TestKeysKeepApartFromOtherPackages(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	s := newStore(t, b, redpacket.Config{})
	prefix := s.Config().Prefix
	for _, key := range []string{prefix, "{" + prefix + ":0}"} {
		t.Run(key, func(t *testing.T) {
			lim, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1})
			require.NoError(t, err)
			list, err := recent.New(b.Client, recent.Config{Key: key, Max: 10})
			require.NoError(t, err)
			t.Cleanup(func() {
				keys, _ := b.Client.Keys(ctx, "*"+strings.Trim(key, "{}")+"*").Result()
				for _, k := range keys {
					b.Client.Del(ctx, k)
				}
			})

			r, err := lim.TryAcquire(ctx, "holder")
			require.NoError(t, err)
			require.True(t, r.Acquired)
			require.NoError(t, list.Add(ctx, "a", "b"))

			id := "p-" + strings.Trim(key, "{}")
			require.NoError(t, s.Create(ctx, redpacket.Packet{ID: id, Total: 10, Count: 2}))
			c, err := s.Grab(ctx, id, "holder")
			require.NoError(t, err)
			require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "holder", Total: 10, Count: 2}), "a packet named as the holder")

			n, err := lim.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "the Limiter's holder is the only one")
			r, err = lim.TryAcquire(ctx, "other")
			require.NoError(t, err)
			assert.False(t, r.Acquired, "the Limiter is still full")
			items, err := list.Items(ctx, 0, 10)
			require.NoError(t, err)
			assert.Len(t, items, 2, "the list keeps its items")

			again, err := s.Grab(ctx, id, "holder")
			require.NoError(t, err)
			assert.Equal(t, c, again)
			shares, amount, err := s.Remaining(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, 1, shares)
			assert.Equal(t, 10-c.Amount, amount)

			// Every key of the Store holds what the Store writes there.
			for k, typ := range map[string]string{
				keyOf(s, "p", id): "hash", keyOf(s, "s", id): "list", keyOf(s, "p", "holder"): "hash",
				keyOf(s, "log", ""): "stream", keyOf(s, "due", ""): "zset",
			} {
				got, err := b.Client.Type(ctx, k).Result()
				require.NoError(t, err)
				assert.Equal(t, typ, got, k)
			}
		})
	}
}
