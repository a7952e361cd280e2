package redpacket_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// downClient returns a client of a port where nothing listens.
func downClient(t *testing.T) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	return client
}

// A Redis that is down, and a context that has ended, fail every call with
// an error that says so; none panics. Run reports the errors and returns
// when its context ends.
func TestRedisDownAndContext(t *testing.T) {
	ctx := context.Background()
	s := mustNew(t, downClient(t))
	err := s.Create(ctx, redpacket.Packet{ID: "p", Total: 10, Count: 2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redpacket: create \"p\"")
	_, err = s.Grab(ctx, "p", "u")
	assert.ErrorContains(t, err, "connection refused")
	_, _, err = s.Remaining(ctx, "p")
	assert.ErrorContains(t, err, "connection refused")

	p, err := persisterOf(s, redpacket.PersisterConfig{DB: sqltest.SQLite(t), Dialect: redpacket.SQLite})
	require.NoError(t, err)
	_, err = p.Drain(ctx)
	assert.ErrorContains(t, err, "connection refused")
	_, err = p.Reconcile(ctx, "p")
	assert.ErrorContains(t, err, "connection refused")

	var reported int
	p, err = persisterOf(s, redpacket.PersisterConfig{DB: sqltest.SQLite(t), Dialect: redpacket.SQLite,
		OnError: func(error) { reported++ }})
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	assert.NoError(t, p.Run(short))
	assert.Positive(t, reported)

	ended, cancel := context.WithCancel(ctx)
	cancel()
	_, err = mustNew(t, redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})).Grab(ended, "p", "u")
	assert.ErrorIs(t, err, context.Canceled)
}

// NewPersister refuses a config that cannot work.
func TestPersisterConfigRefused(t *testing.T) {
	s := mustNew(t, downClient(t))
	db := sqltest.SQLite(t)
	for name, cfg := range map[string]redpacket.PersisterConfig{
		"no db":          {Dialect: redpacket.SQLite},
		"no dialect":     {DB: db},
		"bad dialect":    {DB: db, Dialect: 9},
		"batch too big":  {DB: db, Dialect: redpacket.SQLite, Batch: 10_001},
		"negative batch": {DB: db, Dialect: redpacket.SQLite, Batch: -1},
		"idle too short": {DB: db, Dialect: redpacket.SQLite, ClaimIdle: time.Millisecond},
	} {
		_, err := persisterOf(s, cfg)
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
	}
	var zero *redpacket.Persister
	_, err := zero.Drain(context.Background())
	assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
	assert.ErrorIs(t, zero.Run(context.Background()), redpacket.ErrInvalidConfig)
	_, err = (&redpacket.Persister{}).Reconcile(context.Background(), "p")
	assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
}
