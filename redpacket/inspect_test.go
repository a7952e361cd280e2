package redpacket_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// Inspect reads the packet as created, what is left of it and its claims
// in the order they were taken, and writes nothing.
func TestInspectReadsPacketAndClaims(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{Shards: 3})
		p := redpacket.Packet{ID: "p1", Total: 1000, Count: 4, Split: redpacket.Equal, TTL: time.Hour}
		require.NoError(t, s.Create(ctx, p))
		var claims []redpacket.Claim
		for _, user := range []string{"zoe", "adam", "mia"} {
			c, err := s.Grab(ctx, "p1", user)
			require.NoError(t, err)
			claims = append(claims, c)
		}

		// A Store of the same Config on a client that counts its commands.
		client := b.NewClient(t)
		counter := &redistest.CommandCounter{}
		client.AddHook(counter)
		counted, err := redpacket.New(client, s.Config())
		require.NoError(t, err)
		require.NoError(t, client.Ping(ctx).Err()) // the connection's own commands
		base := counter.Commands()
		snap, err := counted.Inspect(ctx, "p1")
		require.NoError(t, err)
		assert.Equal(t, p, snap.Packet)
		assert.Equal(t, time.Hour, snap.ExpiresAt.Sub(snap.CreatedAt))
		assert.True(t, snap.ExpiredAt.IsZero())
		shares, amount, err := s.Remaining(ctx, "p1")
		require.NoError(t, err)
		assert.Equal(t, 1, snap.SharesLeft)
		assert.Equal(t, shares, snap.SharesLeft)
		assert.Equal(t, int64(250), snap.AmountLeft)
		assert.Equal(t, amount, snap.AmountLeft)
		require.Len(t, snap.Claims, 3)
		for i, c := range snap.Claims {
			assert.Equal(t, i+1, c.Seq, "in the order taken")
			assert.Equal(t, claims[i].User, c.User)
			assert.Equal(t, claims[i].Amount, c.Amount)
			assert.True(t, claims[i].At.Equal(c.At))
		}
		assert.Equal(t, base+1, counter.Commands(), "one read, at one moment")

		_, err = s.Inspect(ctx, "nosuch")
		assert.ErrorIs(t, err, redpacket.ErrNotFound)
		_, err = s.Inspect(ctx, "")
		assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
		var nilCtx context.Context
		_, err = counted.Inspect(nilCtx, "p1")
		assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
		_, err = counted.Inspect(ctx, "")
		assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
		assert.Equal(t, base+1, counter.Commands(), "bad input sends nothing")
		_, err = (*redpacket.Store)(nil).Inspect(ctx, "p1")
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
	})
}
