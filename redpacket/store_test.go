package redpacket_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// A packet's shares go to its first Count users, one each, summing to
// Total, in the order of Seq, at the server's time; then it is sold out.
func TestGrabHandsOutEveryShareOnce(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{})
		for _, split := range []redpacket.Split{redpacket.Random, redpacket.Equal} {
			p := redpacket.Packet{ID: "p-" + split.String(), Total: 1000, Count: 7, Split: split}
			require.NoError(t, s.Create(ctx, p))
			var sum int64
			for i := range p.Count {
				c, err := s.Grab(ctx, p.ID, fmt.Sprint("u", i))
				require.NoError(t, err)
				assert.Equal(t, i+1, c.Seq)
				assert.Equal(t, p.ID, c.PacketID)
				assert.GreaterOrEqual(t, c.Amount, int64(1))
				assert.WithinDuration(t, b.Now(), c.At, 2*time.Second, "the server's clock")
				if split == redpacket.Equal {
					assert.Contains(t, []int64{142, 143}, c.Amount)
				}
				sum += c.Amount
				shares, amount, err := s.Remaining(ctx, p.ID)
				require.NoError(t, err)
				assert.Equal(t, p.Count-i-1, shares)
				assert.Equal(t, p.Total-sum, amount)
			}
			assert.Equal(t, p.Total, sum)
			_, err := s.Grab(ctx, p.ID, "late")
			assert.ErrorIs(t, err, redpacket.ErrSoldOut)
		}
	})
}

// A naive script lets a user grab twice; here a second grab returns the first
// claim, even after the packet sold out or expired.
func TestSecondGrabReturnsTheSameClaim(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "twice", Total: 10, Count: 1, TTL: time.Second}))
		first, err := s.Grab(ctx, "twice", "alice")
		require.NoError(t, err)
		again, err := s.Grab(ctx, "twice", "alice")
		require.NoError(t, err)
		assert.Equal(t, first, again)
		_, err = s.Grab(ctx, "twice", "bob")
		assert.ErrorIs(t, err, redpacket.ErrSoldOut)

		b.Advance(1100 * time.Millisecond)
		again, err = s.Grab(ctx, "twice", "alice")
		require.NoError(t, err)
		assert.Equal(t, first, again)
		_, err = s.Grab(ctx, "twice", "bob")
		assert.ErrorIs(t, err, redpacket.ErrSoldOut, "sold out, expired or not")
	})
}

// A naive script fails on a packet that does not exist ("attempt to
// compare nil with number"); here it is ErrNotFound, with nothing written.
func TestMissingPacket(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{})
		_, err := s.Grab(ctx, "nope", "alice")
		assert.ErrorIs(t, err, redpacket.ErrNotFound)
		_, _, err = s.Remaining(ctx, "nope")
		assert.ErrorIs(t, err, redpacket.ErrNotFound)
		n, err := b.Client.Exists(ctx, "{"+s.Config().Prefix+":0}:redpacket:p:nope", "{"+s.Config().Prefix+":0}:redpacket:log").Result()
		require.NoError(t, err)
		assert.Zero(t, n, "a grab of a missing packet writes nothing")
	})
}

// An expired packet refuses grabs from users with no claim, on the
// server's clock, and keeps reporting its unclaimed shares.
func TestExpiryOnServerClock(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{})
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "short", Total: 100, Count: 4, TTL: 300 * time.Millisecond}))
		c, err := s.Grab(ctx, "short", "early")
		require.NoError(t, err)
		b.Advance(350 * time.Millisecond)
		_, err = s.Grab(ctx, "short", "late")
		assert.ErrorIs(t, err, redpacket.ErrExpired)
		shares, amount, err := s.Remaining(ctx, "short")
		require.NoError(t, err)
		assert.Equal(t, 3, shares)
		assert.Equal(t, 100-c.Amount, amount)
	})
}

// Create refuses another packet under an existing id, and every invalid
// Packet before sending anything; the same Packet again is nil.
func TestCreateRefuses(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	s := newStore(t, b, redpacket.Config{})
	one := redpacket.Packet{ID: "one", Total: 5, Count: 5}
	require.NoError(t, s.Create(ctx, one))
	assert.NoError(t, s.Create(ctx, one), "the same packet: stored already")
	for name, p := range map[string]redpacket.Packet{
		"total": {ID: "one", Total: 6, Count: 5},
		"count": {ID: "one", Total: 5, Count: 4},
		"split": {ID: "one", Total: 5, Count: 5, Split: redpacket.Equal},
		"ttl":   {ID: "one", Total: 5, Count: 5, TTL: time.Hour},
	} {
		assert.ErrorIs(t, s.Create(ctx, p), redpacket.ErrExists, "another %s", name)
	}

	down := mustNew(t, downClient(t))
	for name, p := range map[string]redpacket.Packet{
		"empty id":        {Total: 5, Count: 5},
		"long id":         {ID: strings.Repeat("a", redpacket.MaxIDLen+1), Total: 5, Count: 5},
		"no shares":       {ID: "x", Total: 5},
		"too many shares": {ID: "x", Total: redpacket.MaxShares + 1, Count: redpacket.MaxShares + 1},
		"total < count":   {ID: "x", Total: 4, Count: 5},
		"total too big":   {ID: "x", Total: redpacket.MaxTotal + 1, Count: 5},
		"id not utf-8":    {ID: "\xff", Total: 5, Count: 5},
		"id with nul":     {ID: "a\x00b", Total: 5, Count: 5},
		"bad split":       {ID: "x", Total: 5, Count: 5, Split: 7},
		"negative ttl":    {ID: "x", Total: 5, Count: 5, TTL: -time.Second},
		"sub-ms ttl":      {ID: "x", Total: 5, Count: 5, TTL: time.Microsecond},
	} {
		err := down.Create(ctx, p)
		assert.ErrorIs(t, err, redpacket.ErrInvalidPacket, name)
	}
	_, err := down.Grab(ctx, "", "u")
	assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
	for _, user := range []string{"", "\xff", "a\x00", strings.Repeat("a", redpacket.MaxIDLen+1)} {
		_, err = down.Grab(ctx, "x", user)
		assert.ErrorIs(t, err, redpacket.ErrInvalidArgument, "user %q", user)
	}
	_, _, err = down.Remaining(ctx, "")
	assert.ErrorIs(t, err, redpacket.ErrInvalidArgument)
}

// New and NewPersister refuse a nil client, untyped or typed nil, with
// ErrInvalidConfig and no Store; a zero or nil Store or Persister returns
// ErrInvalidConfig from every method, and none panics.
func TestUnusableStore(t *testing.T) {
	ctx := context.Background()
	db := sqltest.SQLite(t)
	for name, client := range map[string]redis.UniversalClient{
		"nil": nil, "nil *redis.Client": (*redis.Client)(nil), "nil *redis.ClusterClient": (*redis.ClusterClient)(nil),
	} {
		s, err := redpacket.New(client, redpacket.Config{})
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
		assert.Nil(t, s, name)
		assert.EqualError(t, err, "redpacket: new: invalid config: client is nil", name)
		p, err := redpacket.NewPersister(client, redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
		assert.Nil(t, p, name)
		assert.EqualError(t, err, "redpacket: new persister: invalid config: client is nil", name)
	}
	for name, s := range map[string]*redpacket.Store{"nil": nil, "zero": {}} {
		assert.ErrorIs(t, s.Create(ctx, redpacket.Packet{ID: "x", Total: 1, Count: 1}), redpacket.ErrInvalidConfig, name)
		_, err := s.Grab(ctx, "x", "u")
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
		_, _, err = s.Remaining(ctx, "x")
		assert.ErrorIs(t, err, redpacket.ErrInvalidConfig, name)
		assert.Equal(t, redpacket.Config{}, s.Config(), name)
	}
	_, err := redpacket.New(redistest.Miniredis(t).Client, redpacket.Config{Prefix: "a{b"})
	assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
	_, err = redpacket.New(redistest.Miniredis(t).Client, redpacket.Config{Shards: 2000})
	assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
	_, err = redpacket.NewPersister(redistest.Miniredis(t).Client, redpacket.PersisterConfig{
		Store: redpacket.Config{Shards: -1}, DB: db, Dialect: redpacket.SQLite})
	assert.ErrorIs(t, err, redpacket.ErrInvalidConfig)
}

// New and NewPersister send nothing: not even to a server that is up.
func TestNewSendsNothing(t *testing.T) {
	b := redistest.Redis(t)
	sent := &redistest.CommandCounter{}
	client := b.NewClient(t)
	client.AddHook(sent)
	_, err := redpacket.New(client, redpacket.Config{Shards: 4, Replicas: 1})
	require.NoError(t, err)
	_, err = redpacket.NewPersister(client, redpacket.PersisterConfig{DB: sqltest.SQLite(t), Dialect: redpacket.SQLite})
	require.NoError(t, err)
	assert.Zero(t, sent.Commands())
}

// Many goroutines grabbing at once take every share exactly once.
func TestConcurrentGrabsNeverOversell(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		s := newStore(t, b, redpacket.Config{Shards: 4})
		p := redpacket.Packet{ID: "rush", Total: 10_000, Count: 50}
		require.NoError(t, s.Create(ctx, p))
		var mu sync.Mutex
		var claims []redpacket.Claim
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 40 {
					c, err := s.Grab(ctx, p.ID, fmt.Sprintf("g%d-u%d", g, i))
					if err == nil {
						mu.Lock()
						claims = append(claims, c)
						mu.Unlock()
					} else if !assert.ErrorIs(t, err, redpacket.ErrSoldOut) {
						return
					}
				}
			}()
		}
		wg.Wait()
		require.Len(t, claims, p.Count)
		var sum int64
		seqs := map[int]bool{}
		for _, c := range claims {
			sum += c.Amount
			seqs[c.Seq] = true
		}
		assert.Equal(t, p.Total, sum)
		assert.Len(t, seqs, p.Count)
	})
}
