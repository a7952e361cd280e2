package redpacket_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// An error names the method that failed, and the package once, and
// matches its sentinel.
func TestErrorsNameTheMethodOnce(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "one", Total: 1, Count: 1}))
	_, err := s.Grab(ctx, "one", "alice")
	require.NoError(t, err)
	down := mustNew(t, downClient(t))
	var zero *redpacket.Persister
	_, grabSoldOut := s.Grab(ctx, "one", "bob")
	_, grabBadUser := down.Grab(ctx, "one", "")
	_, grabUnusable := (&redpacket.Store{}).Grab(ctx, "x", "u")
	_, _, remainingMissing := s.Remaining(ctx, "nope")
	_, drainZero := zero.Drain(ctx)
	for _, step := range []struct {
		err    error
		is     error
		prefix string
	}{
		{s.Create(ctx, redpacket.Packet{ID: "one", Total: 2, Count: 1}), redpacket.ErrExists, `redpacket: create "one": packet exists`},
		{down.Create(ctx, redpacket.Packet{ID: "x"}), redpacket.ErrInvalidPacket, `redpacket: create "x": invalid packet: `},
		{grabSoldOut, redpacket.ErrSoldOut, `redpacket: grab "one": sold out`},
		{grabBadUser, redpacket.ErrInvalidArgument, `redpacket: grab "one": invalid argument: user ""`},
		{grabUnusable, redpacket.ErrInvalidConfig, `redpacket: grab: invalid config: not made by New`},
		{remainingMissing, redpacket.ErrNotFound, `redpacket: remaining "nope": packet not found`},
		{drainZero, redpacket.ErrInvalidConfig, `redpacket: drain: invalid config: `},
		{redpacket.CreateSchema(ctx, nil), redpacket.ErrInvalidArgument, `redpacket: create schema: invalid argument: `},
	} {
		assert.ErrorIs(t, step.err, step.is, step.prefix)
		if assert.Error(t, step.err) {
			assert.True(t, strings.HasPrefix(step.err.Error(), step.prefix), "%q begins %q", step.err, step.prefix)
			assert.Equal(t, 1, strings.Count(step.err.Error(), "redpacket"), "%q names the package once", step.err)
		}
	}
}

// Config values that WAIT would take for "for ever" are refused, with
// ErrInvalidConfig.
func TestConfigRefusesWhatRedisCannotTake(t *testing.T) {
	client := redistest.Miniredis(t).Client
	for name, cfg := range map[string]redpacket.Config{
		"sub-ms replica timeout":   {Replicas: 1, ReplicaTimeout: time.Microsecond},
		"negative replica timeout": {Replicas: 1, ReplicaTimeout: -time.Second},
		"negative replicas":        {Replicas: -1},
		"short linger":             {Linger: time.Millisecond},
	} {
		_, err := redpacket.New(client, cfg)
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
	}
}

// The largest TTL, Linger and Total are kept exactly: the packet's
// expiry is its creation plus its TTL to the millisecond, its shares sum
// to Total, and the persister writes them.
func TestLargestValuesAreExact(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{Linger: math.MaxInt64})
		for _, split := range []redpacket.Split{redpacket.Random, redpacket.Equal} {
			p := redpacket.Packet{ID: "big-" + split.String(), Total: redpacket.MaxTotal, Count: 3, Split: split, TTL: math.MaxInt64}
			require.NoError(t, s.Create(ctx, p))
			require.NoError(t, s.Create(ctx, p), "found again: the TTL read back is exact")
			f, err := b.Client.HMGet(ctx, "{"+s.Config().Prefix+":0}:redpacket:p:"+p.ID, "created", "expires").Result()
			require.NoError(t, err)
			var created, expires int64
			fmt.Sscan(f[0].(string), &created)
			fmt.Sscan(f[1].(string), &expires)
			assert.Equal(t, p.TTL.Milliseconds(), expires-created)
			var sum int64
			for i := range p.Count {
				c, err := s.Grab(ctx, p.ID, fmt.Sprint("u", i))
				require.NoError(t, err)
				sum += c.Amount
			}
			assert.Equal(t, p.Total, sum)
		}
	})
}
