package redpacket_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// With Config.Replicas, a claim is on the replica when Grab returns it,
// log entry and all; with the replica cut off, Grab fails with
// ErrNotReplicated, and the master has the claim it took.
func TestReplicasHaveEveryClaim(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Long enough for a busy machine's replica while it is up.
	s, err := redpacket.New(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 10 * time.Second})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 100, Count: 10}))
	c, err := s.Grab(ctx, "p", "alice")
	require.NoError(t, err)
	held, err := r.ReplicaClient.HGet(ctx, "{redpacket:0}:redpacket:p:p", "u:alice").Result()
	require.NoError(t, err, "the replica has the claim")
	assert.Contains(t, held, ":1:")
	n, err := r.ReplicaClient.XLen(ctx, "{redpacket:0}:redpacket:log").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the replica has the log: the packet and the claim")

	r.CutOff(t)
	s, err = redpacket.New(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = s.Grab(ctx, "p", "bob")
	assert.ErrorIs(t, err, redpacket.ErrNotReplicated)
	assert.Less(t, time.Since(start), 2*time.Second)
	// The master took the share: a Grab there returns it.
	master, err := redpacket.New(r.Client, redpacket.Config{})
	require.NoError(t, err)
	bob, err := master.Grab(ctx, "p", "bob")
	require.NoError(t, err)
	assert.Equal(t, c.Seq+1, bob.Seq)
}

// With Config.Replicas, a persister commits only log entries the replica
// has: with the replica cut off, it writes nothing and fails with
// ErrNotReplicated, leaving the entries to be written later.
func TestPersisterCommitsOnlyWhatReplicasHave(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := redpacket.New(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 10 * time.Second})
	require.NoError(t, err)
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	p := newPersister(t, s, db, redpacket.PersisterConfig{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 100, Count: 10}))
	_, err = s.Grab(ctx, "p", "alice")
	require.NoError(t, err)
	n, err := p.Drain(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the packet and alice's claim, which the replica has")

	r.CutOff(t)
	short, err := redpacket.New(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	_, err = short.Grab(ctx, "p", "bob") // taken on the master only
	require.ErrorIs(t, err, redpacket.ErrNotReplicated)
	p = newPersister(t, short, db, redpacket.PersisterConfig{})
	_, err = p.Drain(ctx)
	assert.ErrorIs(t, err, redpacket.ErrNotReplicated)
	assert.Len(t, rows(t, db, "p"), 1, "bob's claim, which a failover would lose, is not committed")
	pending, err := p.Pending(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), pending, "it waits in the log")
}

// With Config.Replicas, the claims of Grabs that shared a script call are
// on the replica when each Grab returns; with the replica cut off, each
// fails with ErrNotReplicated, and the master has the claims taken.
func TestReplicasHaveEveryClaimOfABatch(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx := context.Background()
	s, err := redpacket.New(r.Client, redpacket.Config{Prefix: "batch", Replicas: 1, ReplicaTimeout: 10 * time.Second})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 100, Count: 10}))
	key := "{batch:0}:redpacket:p:p"
	g := newGate(r.Client, key)
	for _, a := range crowd(t, s, g, "p", "first", []string{"a", "b", "c"}) {
		require.NoError(t, a.err, a.user)
		held, err := r.ReplicaClient.HGet(ctx, key, "u:"+a.user).Result()
		require.NoError(t, err, "the replica has %s's claim", a.user)
		assert.Equal(t, fmt.Sprintf("%d:%d:%d", a.claim.Amount, a.claim.Seq, a.claim.At.UnixMilli()), held)
	}
	require.True(t, g.Batched(), "%v", g.Members())

	r.CutOff(t)
	s, err = redpacket.New(r.Client, redpacket.Config{Prefix: "batch", Replicas: 1, ReplicaTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	g = newGate(r.Client, key)
	for _, a := range crowd(t, s, g, "p", "second", []string{"d", "e"}) {
		assert.ErrorIs(t, a.err, redpacket.ErrNotReplicated, a.user)
	}
	require.True(t, g.Batched(), "%v", g.Members())
	master, err := redpacket.New(r.Client, redpacket.Config{Prefix: "batch"})
	require.NoError(t, err)
	for _, user := range []string{"second", "d", "e"} {
		c, err := master.Grab(ctx, "p", user)
		require.NoError(t, err)
		assert.Greater(t, c.Seq, 4, "%s: the master took the share", user)
	}
}
