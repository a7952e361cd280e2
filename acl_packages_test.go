package slotlimit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/observe"
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

// aclAdaptive runs the calls of an adaptive.Limiter on user's client, on
// key (keys under "app:", tagged or not), and returns the first error:
// the limit read directly, a slot taken and one refused, a waiter handed
// a slot by a release's notice, that slot held past its claim time when
// claim is set (so that its claim runs), then dropped, the limit
// inspected, and a wait given up, which leaves the queue. admin, the
// default user's client of the same server, watches the queue and the
// subscription. A step that cannot go on (a denied command, say) ends the
// run with an error, so that the tests can run it with a line that lacks
// a right.
func aclAdaptive(ctx context.Context, user, admin redis.UniversalClient, key string, claim bool) error {
	rec := &observetest.Recorder{}
	a, err := adaptive.New(user, adaptive.Config{Key: key, Min: 1, Max: 3, Initial: 1, TTL: 10 * time.Second,
		Window: time.Millisecond, Observer: rec})
	if err != nil {
		return err
	}
	side := "{" + key + "}/adaptive"
	if strings.Contains(key, "{") {
		side = key + ":adaptive"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	if limit, err := a.Limit(ctx); err != nil || limit != 1 {
		return fmt.Errorf("limit: %d, %w", limit, err)
	}
	s, err := a.TryAcquire(ctx)
	if err != nil {
		return fmt.Errorf("try acquire: %w", err)
	}
	if _, err := a.TryAcquire(ctx); !errors.Is(err, adaptive.ErrLimited) {
		return fmt.Errorf("try acquire past the limit: %v, want ErrLimited", err)
	}

	// A waiter queues and subscribes, and s's Success hands it the slot
	// through a notice. A periodic try of the waiter's that the release
	// overtakes takes the slot by itself, so the hand-over runs again, a
	// few times at most, until the notice is what hands it over.
	// A Success may raise the limit, so each round first takes every free
	// slot, leaving the waiter nothing but the queue.
	var w *adaptive.Slot
	var extra []*adaptive.Slot
	for attempt := 1; w == nil; attempt++ {
		if attempt > 3 {
			return errors.New("the waiter was never handed its slot by a notice")
		}
		for {
			e, err := a.TryAcquire(ctx)
			if errors.Is(err, adaptive.ErrLimited) {
				break
			}
			if err != nil {
				return fmt.Errorf("try acquire: %w", err)
			}
			extra = append(extra, e)
		}
		type acquired struct {
			s   *adaptive.Slot
			err error
		}
		done := make(chan acquired, 1)
		go func() {
			s, err := a.Acquire(ctx)
			done <- acquired{s, err}
		}()
		if err := aclAwait(ctx, func() bool {
			n, err := admin.Exists(ctx, side+":q").Result()
			if err != nil || n == 0 {
				return false
			}
			return aclSubscribers(ctx, admin, side+":free") > 0
		}); err != nil {
			cancel()
			if got := <-done; got.err != nil {
				err = fmt.Errorf("%w (its Acquire: %w)", err, got.err)
			}
			return fmt.Errorf("the waiter never queued and subscribed: %w", err)
		}
		rec.Take()
		if err := s.Success(ctx); err != nil {
			cancel()
			<-done
			return fmt.Errorf("success: %w", err)
		}
		got := <-done
		if got.err != nil {
			return fmt.Errorf("acquire: %w", got.err)
		}
		if slices.Contains(observetest.Kinds(rec.Take()), observe.HandedOver) {
			w = got.s
		} else {
			s = got.s
		}
	}
	for _, e := range extra {
		if err := e.Ignore(ctx); err != nil {
			return fmt.Errorf("ignore: %w", err)
		}
	}
	if claim {
		time.Sleep(1200 * time.Millisecond) // the handed slot is claimed a second after the hand-off
	}
	if err := w.Dropped(ctx); err != nil {
		return fmt.Errorf("dropped: %w", err)
	}
	info, err := a.Inspect(ctx)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if info.InUse != 0 {
		return fmt.Errorf("inspect: %d in use, want 0", info.InUse)
	}

	// Every slot taken, a wait that gives up leaves the queue.
	var held []*adaptive.Slot
	for {
		s, err := a.TryAcquire(ctx)
		if errors.Is(err, adaptive.ErrLimited) {
			break
		}
		if err != nil {
			return fmt.Errorf("try acquire: %w", err)
		}
		held = append(held, s)
	}
	short, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = a.Acquire(short)
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("acquire that gives up: %v, want its deadline", err)
	}
	for _, s := range held {
		if err := s.Ignore(ctx); err != nil {
			return fmt.Errorf("ignore: %w", err)
		}
	}
	return nil
}

// aclSubscribers returns the number of subscribers to channel: by
// SUBSCRIBE on a server, by SSUBSCRIBE on a Cluster, counted on each shard.
func aclSubscribers(ctx context.Context, admin redis.UniversalClient, channel string) int64 {
	cluster, ok := admin.(*redis.ClusterClient)
	if !ok {
		subs, _ := admin.PubSubNumSub(ctx, channel).Result()
		return subs[channel]
	}
	var n atomic.Int64
	cluster.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error { //nolint:errcheck // counted below
		subs, _ := shard.PubSubShardNumSub(ctx, channel).Result()
		n.Add(subs[channel])
		return nil
	})
	return n.Load()
}

// aclAwait waits until cond holds, for up to 5 seconds: a loaded machine
// running the race detector can take seconds over a TLS dial, an ACL check
// and a script load.
func aclAwait(ctx context.Context, cond func() bool) error {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("gave up after 5s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// aclAdaptiveRow returns the commands that docs/security.md lists for the
// adaptive package, inside its scripts and sent directly, as ACL rights:
// "+time" and the like, the first of "PUBLISH/SPUBLISH" (that of a
// single server).
func aclAdaptiveRow(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("docs/security.md")
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		row, ok := strings.CutPrefix(line, "| `adaptive` |")
		if !ok {
			continue
		}
		var rights []string
		parts := strings.Split(strings.ReplaceAll(row, "`/`", "/"), "`")
		for i := 1; i < len(parts); i += 2 { // the words in backquotes
			right := "+" + strings.ToLower(strings.Split(parts[i], "/")[0])
			if !slices.Contains(rights, right) {
				rights = append(rights, right)
			}
		}
		return rights
	}
	t.Fatal("docs/security.md has no row for `adaptive` in its table of commands")
	return nil
}

// An adaptive.Limiter runs under the first ACL line of docs/security.md,
// and under the least its row of commands lists (with the key and channel
// patterns, and PING for an idle subscription), over TLS, with keys
// tagged and not: the server denies nothing. And each right of the row,
// and each pattern, is needed: the line without it fails a call, or the
// server denies something.
func TestACLUserRunsAdaptiveOverTLS(t *testing.T) {
	srv, certs := redistest.StartTLSServer(t)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, TLSConfig: certs.ClientConfig()})
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// run makes the user of line, flushes the script cache so that the
	// first calls go by EVAL, and runs aclAdaptive on a new client of
	// the user, with an untagged key and a tagged one. It returns the
	// server's denials and the run's error.
	run := func(t *testing.T, line string, claim bool) ([]string, error) {
		password := rand.Text()
		aclSetUser(t, admin, line, password)
		require.NoError(t, admin.ScriptFlush(ctx).Err())
		require.NoError(t, admin.ACLLogReset(ctx).Err())
		opts, err := redis.ParseURL("rediss://" + aclUserName + ":" + password + "@" + srv.Addr)
		require.NoError(t, err)
		opts.TLSConfig.RootCAs = certs.CertPool()
		user := redis.NewClient(opts)
		defer user.Close()
		err = aclAdaptive(ctx, user, admin, aclKey("adaptive"), claim)
		if err == nil {
			err = aclAdaptive(ctx, user, admin, "app:{"+aclRand()+"}:pay", false)
		}
		return denials(t, admin), err
	}

	base := []string{"~app:*", "~{app:*", "&app:*", "&{app:*", "+ping"}
	rights := aclAdaptiveRow(t)
	for _, want := range []string{"+evalsha", "+eval", "+hget", "+subscribe", "+publish", "+time"} {
		require.Contains(t, rights, want, "the row of docs/security.md")
	}
	// lineWithout is the least line, without one of its words.
	lineWithout := func(without string) string {
		var words []string
		for _, w := range append(slices.Clone(base), rights...) {
			if w != without {
				words = append(words, w)
			}
		}
		return "ACL SETUSER " + aclUserName + " reset on >PASSWORD " + strings.Join(words, " ")
	}

	t.Run("the first line", func(t *testing.T) {
		denied, err := run(t, aclLimiterLock, true)
		require.NoError(t, err)
		assert.Empty(t, denied, "ACL LOG")
	})
	t.Run("the row", func(t *testing.T) {
		denied, err := run(t, lineWithout(""), true)
		require.NoError(t, err)
		assert.Empty(t, denied, "ACL LOG")
	})
	for _, right := range append(slices.Clone(base[:4]), rights...) {
		t.Run("without "+right, func(t *testing.T) {
			denied, err := run(t, lineWithout(right), false)
			assert.True(t, err != nil || len(denied) > 0, "a run without %s failed nothing and was denied nothing", right)
		})
	}
}
