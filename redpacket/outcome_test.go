package redpacket_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// ErrOutcomeUnknown is the module's one value.
func TestErrOutcomeUnknownIsTheModules(t *testing.T) {
	assert.True(t, errors.Is(redpacket.ErrOutcomeUnknown, slotlimit.ErrOutcomeUnknown))
	assert.ErrorIs(t, redpacket.ErrInvalidPacket, redpacket.ErrInvalidArgument)
	assert.NotErrorIs(t, redpacket.ErrInvalidArgument, redpacket.ErrInvalidPacket)
}

// A write whose reply is lost for good fails with an error matching
// ErrOutcomeUnknown, and the same call made again answers as its first
// run did; so do the reads. Errors returned before anything is sent, a
// call that never reached the server and Redis's error replies do not
// match it.
func TestLostReplyIsAnUnknownOutcome(t *testing.T) {
	for _, mk := range []func(*testing.T) *redistest.Backend{redistest.Miniredis, redistest.Redis} {
		b := mk(t)
		t.Run(b.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, cutter, plain := cutStores(t, b, redpacket.Config{})
			db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
			per := newPersister(t, s, db, redpacket.PersisterConfig{})
			// Every script is cached, and the group made.
			require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1}))
			_, err := per.Drain(ctx)
			require.NoError(t, err)
			lost := func(what string, err error) {
				t.Helper()
				assert.ErrorIs(t, err, redpacket.ErrOutcomeUnknown, what)
				assert.ErrorIs(t, err, slotlimit.ErrOutcomeUnknown, what)
				assert.Greater(t, cutter.Cuts(), 3, "%s: every try's reply was lost", what)
				cutter.Arm(0)
			}

			p := redpacket.Packet{ID: "lost", Total: 50, Count: 5}
			cutter.Arm(10, "evalsha", keyOf(s, "p", p.ID))
			lost("create", s.Create(ctx, p))
			require.NoError(t, s.Create(ctx, p), "created once, by the first run")

			cutter.Arm(10, "evalsha", keyOf(s, "p", p.ID))
			_, err = s.Grab(ctx, p.ID, "alice")
			lost("grab", err)
			c, err := s.Grab(ctx, p.ID, "alice")
			require.NoError(t, err)
			assert.Equal(t, 1, c.Seq, "the first run's claim")

			cutter.Arm(10, "hmget", keyOf(s, "p", p.ID))
			_, _, err = s.Remaining(ctx, p.ID)
			lost("remaining", err)
			shares, _, err := s.Remaining(ctx, p.ID)
			require.NoError(t, err)
			assert.Equal(t, 4, shares, "one share taken")

			cutter.Arm(10, "evalsha", keyOf(s, "log", ""), redpacket.DefaultGroup)
			_, err = per.Drain(ctx)
			lost("drain's ack", err)
			_, err = per.Drain(ctx)
			require.NoError(t, err)
			assertPersisted(t, per, db, p.ID, map[string]redpacket.Claim{"alice": c})

			cutter.Arm(10, "xlen")
			_, err = per.Pending(ctx)
			lost("pending", err)
			cutter.Arm(10, "hgetall")
			_, err = per.Reconcile(ctx, p.ID)
			lost("reconcile", err)

			// Known outcomes.
			_, err = plain.Grab(ctx, "no-such", "alice")
			assert.NotErrorIs(t, err, redpacket.ErrOutcomeUnknown, "not found")
			assert.NotErrorIs(t, plain.Create(ctx, redpacket.Packet{ID: p.ID, Total: 7, Count: 7}), redpacket.ErrOutcomeUnknown, "exists")
			var nilCtx context.Context
			for what, err := range map[string]error{
				"invalid packet": plain.Create(ctx, redpacket.Packet{ID: "x"}),
				"nil ctx":        plain.Create(nilCtx, p),
				"unusable store": (&redpacket.Store{}).Create(ctx, p),
			} {
				assert.Error(t, err, what)
				assert.NotErrorIs(t, err, redpacket.ErrOutcomeUnknown, what)
			}
			_, err = plain.Grab(ctx, p.ID, "")
			assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
			assert.NotErrorIs(t, err, redpacket.ErrOutcomeUnknown, "invalid user")

			require.NoError(t, b.Client.Set(ctx, keyOf(s, "p", "str"), "x", 0).Err())
			_, err = plain.Grab(ctx, "str", "alice")
			assert.ErrorContains(t, err, "WRONGTYPE")
			assert.NotErrorIs(t, err, redpacket.ErrOutcomeUnknown, "a Redis error reply")

			_, err = mustNew(t, downClient(t)).Grab(ctx, p.ID, "alice")
			assert.ErrorContains(t, err, "connection refused")
			assert.NotErrorIs(t, err, redpacket.ErrOutcomeUnknown, "never sent")
		})
	}
}
