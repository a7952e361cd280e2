package redpacket_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// classicGrab is the grab script many red-packet services run today: it
// builds its key names from KEYS[1], the packet id, and ARGV[1] is
// "user-timeMillis".
var classicGrab = redis.NewScript("local listKey = 'red_packet_list_'..KEYS[1] \n" +
	"local redPacket = 'red_packet_'..KEYS[1] \n" +
	"local stock = tonumber(redis.call('hget', redPacket, 'stock')) \n" +
	"if stock <= 0 then return 0 end \n" +
	"stock = stock -1 \n" +
	"redis.call('hset', redPacket, 'stock', tostring(stock)) \n" +
	"redis.call('rpush', listKey, ARGV[1]) \n" +
	"if stock == 0 then return 2 end \n" +
	"return 1 \n")

// classicPacket creates a packet as the classic scheme does, with its
// own key names.
func classicPacket(t *testing.T, client redis.UniversalClient, id string, stock int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.HSet(ctx, "red_packet_"+id, "stock", stock, "unit_amount", "1.0").Err())
	t.Cleanup(func() { client.Del(ctx, "red_packet_"+id, "red_packet_list_"+id) })
}

// The classic script gives a user a second share; a Store gives back the
// first.
func TestClassicScriptGrabsTwiceAStoreOnce(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	id := "9001" // the classic scheme's ids are numbers
	classicPacket(t, b.Client, id, 10)
	for range 2 {
		require.Equal(t, int64(1), classicGrab.Run(ctx, b.Client, []string{id}, "42-1700000000000").Val())
	}
	n, err := b.Client.LLen(ctx, "red_packet_list_"+id).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the classic script: user 42 holds two shares")

	s := newStore(t, b, redpacket.Config{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 10, Count: 10, Split: redpacket.Equal}))
	first, err := s.Grab(ctx, "p", "42")
	require.NoError(t, err)
	second, err := s.Grab(ctx, "p", "42")
	require.NoError(t, err)
	assert.Equal(t, first, second)
	left, _, err := s.Remaining(ctx, "p")
	require.NoError(t, err)
	assert.Equal(t, 9, left, "a Store: user 42 holds one share")
}

// The classic script fails on a packet that does not exist; a Store
// returns ErrNotFound.
func TestClassicScriptFailsOnAMissingPacketAStoreSaysNotFound(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	err := classicGrab.Run(ctx, b.Client, []string{"no-such-packet"}, "42-1700000000000").Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "attempt to compare nil with number")

	s := newStore(t, b, redpacket.Config{})
	_, err = s.Grab(ctx, "no-such-packet", "42")
	assert.ErrorIs(t, err, redpacket.ErrNotFound)
}

// The classic script builds key names inside itself, so on a Cluster it
// fails whenever they hash to another node than KEYS[1]; a Store passes
// every key in KEYS, in one slot.
func TestClassicScriptFailsOnAClusterAStoreDoesNot(t *testing.T) {
	ctx := context.Background()
	b := redistest.RedisCluster(t)
	failed := 0
	for i := range 20 {
		id := "classic-" + strconv.Itoa(i)
		classicPacket(t, b.Client, id, 1)
		if classicGrab.Run(ctx, b.Client, []string{id}, "42-1700000000000").Err() != nil {
			failed++
		}
	}
	assert.Positive(t, failed, "the classic grabs of some packets fail on a Cluster")

	s := newStore(t, b, redpacket.Config{Shards: 8})
	for i := range 20 {
		id := "p-" + strconv.Itoa(i)
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: id, Total: 1, Count: 1}))
		_, err := s.Grab(ctx, id, "42")
		require.NoError(t, err)
	}
}

// The classic scheme saves a packet's claims only from the process whose grab took
// the last share (the reply 2), in a job nobody retries: if that process
// dies first, no later grab replies 2, and the claims never reach the
// database. A Store's claims wait in the log for any persister, however
// late it starts.
func TestClassicScriptLosesClaimsOnACrashAStoreDoesNot(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	id := "9002"
	classicPacket(t, b.Client, id, 3)
	replies := []int64{}
	for u := range 3 {
		replies = append(replies, classicGrab.Run(ctx, b.Client, []string{id}, strconv.Itoa(u)+"-1700000000000").Val().(int64))
	}
	assert.Equal(t, []int64{1, 1, 2}, replies, "only the last grab would start the save")
	// The process that got 2 dies here. Every grab after it replies 0:
	// nothing will ever save the list.
	for u := 3; u < 6; u++ {
		assert.Equal(t, int64(0), classicGrab.Run(ctx, b.Client, []string{id}, strconv.Itoa(u)+"-1700000000000").Val())
	}

	s := newStore(t, b, redpacket.Config{})
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p", Total: 3, Count: 3}))
	claims := grabAll(t, s, "p", 3)
	// No persister ran while the claims were taken; one that starts later
	// writes them all.
	db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
	p := newPersister(t, s, db, redpacket.PersisterConfig{})
	_, err := p.Drain(ctx)
	require.NoError(t, err)
	assertPersisted(t, p, db, "p", claims)
}
