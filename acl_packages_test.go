package slotlimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The calls of each companion package, for TestACLUserRunsEveryPackageOverTLS:
// enough of each to run every one of its scripts and direct commands.

func aclRateLimit(ctx context.Context, t *testing.T, client redis.UniversalClient) {
	l, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	tag := "app:{rl:" + aclRand() + "}"
	res, err := l.Allow(ctx, tag+":gcra", ratelimit.PerSecond(10))
	aclCheck(t, "allow, GCRA", err)
	require.True(t, res.Allowed)
	res, err = l.Allow(ctx, tag+":window", ratelimit.Limit{Rate: 10, Period: time.Second, Algorithm: ratelimit.FixedWindow})
	aclCheck(t, "allow, fixed window", err)
	require.True(t, res.Allowed)
	all, err := l.AllowAll(ctx, []ratelimit.Rule{
		{Key: tag + ":gcra", Limit: ratelimit.PerSecond(10)},
		{Key: tag + ":window", Limit: ratelimit.Limit{Rate: 10, Period: time.Second, Algorithm: ratelimit.FixedWindow}},
	})
	aclCheck(t, "allow all", err)
	require.True(t, all.Allowed())
	aclCheck(t, "reset", l.Reset(ctx, tag+":gcra", ratelimit.PerSecond(10)))
}

func aclRecent(ctx context.Context, t *testing.T, client redis.UniversalClient) {
	l, err := recent.New(client, recent.Config{Key: "app:recent:" + aclRand(), Max: 2, TTL: time.Minute, MaxAge: time.Minute})
	require.NoError(t, err)
	aclCheck(t, "add", l.Add(ctx, "a", "b", "c")) // one more than Max
	items, err := l.Items(ctx, 0, 10)
	aclCheck(t, "items", err)
	require.Len(t, items, 2)
	n, err := l.Remove(ctx, "c")
	aclCheck(t, "remove", err)
	require.EqualValues(t, 1, n)
	n, err = l.Len(ctx)
	aclCheck(t, "len", err)
	require.EqualValues(t, 1, n)
}

func aclDelayQueue(ctx context.Context, t *testing.T, client redis.UniversalClient) {
	q, err := delayqueue.New(client, delayqueue.Config{Key: "app:queue:" + aclRand(), Visibility: 10 * time.Second, MaxAttempts: 1})
	require.NoError(t, err)

	// A consumer waits on the empty queue until a push's notice wakes it.
	polled := make(chan delayqueue.Message, 1)
	pollErr := make(chan error, 1)
	go func() {
		m, err := q.Poll(ctx)
		pollErr <- err
		polled <- m
	}()
	time.Sleep(100 * time.Millisecond) // let it subscribe and wait
	_, err = q.Push(ctx, []byte("one"), 0)
	aclCheck(t, "push", err)
	aclCheck(t, "poll", <-pollErr)
	m := <-polled
	aclCheck(t, "extend", q.Extend(ctx, m))
	aclCheck(t, "ack", q.Ack(ctx, m))

	_, err = q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("two")}, {Payload: []byte("three")}})
	aclCheck(t, "push batch", err)
	for range 2 {
		m, err := q.Poll(ctx)
		aclCheck(t, "poll", err)
		aclCheck(t, "nack", q.Nack(ctx, m, 0)) // its last attempt: to the dead letters
	}
	dead, err := q.DeadLetters(ctx, 10)
	aclCheck(t, "dead letters", err)
	require.Len(t, dead, 2)
	n, err := q.Requeue(ctx, dead[0].ID)
	aclCheck(t, "requeue", err)
	require.Equal(t, 1, n)
	n, err = q.Drop(ctx, dead[1].ID)
	aclCheck(t, "drop", err)
	require.Equal(t, 1, n)
	ready, _, _, _, err := q.Len(ctx)
	aclCheck(t, "len", err)
	require.EqualValues(t, 1, ready)

	// Run, until its handler has the requeued message.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	handled := make(chan struct{})
	var once sync.Once
	runErr := make(chan error, 1)
	go func() {
		runErr <- q.Run(runCtx, 1, func(ctx context.Context, m delayqueue.Message) error {
			once.Do(func() { close(handled) })
			return nil
		})
	}()
	select {
	case <-handled:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not deliver the requeued message")
	}
	stop()
	require.ErrorIs(t, <-runErr, context.Canceled)
}

func aclRedPacket(ctx context.Context, t *testing.T, client redis.UniversalClient) {
	s, err := redpacket.New(client, redpacket.Config{Prefix: "app:rp", Linger: time.Minute})
	require.NoError(t, err)
	id := aclRand()
	aclCheck(t, "create", s.Create(ctx, redpacket.Packet{ID: id, Total: 100, Count: 2}))
	_, err = s.Grab(ctx, id, "u1")
	aclCheck(t, "grab", err)
	shares, _, err := s.Remaining(ctx, id)
	aclCheck(t, "remaining", err)
	require.Equal(t, 1, shares)
	// One that expires with a share left, for the persister to find due.
	expiring := aclRand()
	aclCheck(t, "create", s.Create(ctx, redpacket.Packet{ID: expiring, Total: 100, Count: 2, TTL: time.Millisecond}))
	time.Sleep(10 * time.Millisecond)

	db := sqltest.SQLite(t)
	require.NoError(t, redpacket.CreateSchema(ctx, db))
	expired := make(chan redpacket.Expiry, 1)
	p, err := redpacket.NewPersister(client, redpacket.PersisterConfig{Store: redpacket.Config{Prefix: "app:rp", Linger: time.Minute}, DB: db, Dialect: redpacket.SQLite,
		OnExpired: func(e redpacket.Expiry) {
			select { // at least once: a second report is dropped
			case expired <- e:
			default:
			}
		}})
	require.NoError(t, err)
	n, err := p.Drain(ctx)
	aclCheck(t, "drain", err)
	require.GreaterOrEqual(t, n, 1)
	require.Equal(t, expiring, (<-expired).PacketID)
	pending, err := p.Pending(ctx)
	aclCheck(t, "pending", err)
	require.Zero(t, pending)
	r, err := p.Reconcile(ctx, id)
	aclCheck(t, "reconcile", err)
	require.True(t, r.OK(), "%+v", r)
}
