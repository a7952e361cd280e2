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

// With Config.Replicas, a claim is on the replica when Grab returns it,
// log entry and all; with the replica cut off, Grab fails with
// ErrNotReplicated, and the master has the claim it took.
func TestReplicasHaveEveryClaim(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Long enough for a busy machine's replica while it is up.
	s, err := redpacket.NewStore(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 10 * time.Second})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 100, Count: 10}))
	c, err := s.Grab(ctx, "p", "alice")
	require.NoError(t, err)
	held, err := r.ReplicaClient.HGet(ctx, "{redpacket:0}:p:p", "u:alice").Result()
	require.NoError(t, err, "the replica has the claim")
	assert.Contains(t, held, ":1:")
	n, err := r.ReplicaClient.XLen(ctx, "{redpacket:0}:log").Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the replica has the log: the packet and the claim")

	r.CutOff(t)
	s, err = redpacket.NewStore(r.Client, redpacket.Config{Replicas: 1, ReplicaTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = s.Grab(ctx, "p", "bob")
	assert.ErrorIs(t, err, redpacket.ErrNotReplicated)
	assert.Less(t, time.Since(start), 2*time.Second)
	// The master took the share: a Grab there returns it.
	master, err := redpacket.NewStore(r.Client, redpacket.Config{})
	require.NoError(t, err)
	bob, err := master.Grab(ctx, "p", "bob")
	require.NoError(t, err)
	assert.Equal(t, c.Seq+1, bob.Seq)
}
