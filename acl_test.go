package slotlimit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"

	"github.com/slotlimit/slotlimit/observe"
)

// The ACL lines of docs/security.md, word for word (TestACLLinesInDocs
// holds the two together), and what it says to add to them. The tests run them with a password in place of
// PASSWORD, on a server that listens only for TLS, and use the library as
// that user, with keys that begin "app:".
const (
	// aclLimiterLock is the user of a Limiter, a Counter and a lock.Mutex.
	aclLimiterLock = "ACL SETUSER slotlimit reset on >PASSWORD ~app:* ~{app:* &app:* &{app:* " +
		"+evalsha +eval +subscribe +publish +ping +multi +exec +wait +time " +
		"+get +set +del +exists +incr +incrby +decr +pexpire +pexpireat +pttl " +
		"+hget +hmget +hset +hdel +hincrby " +
		"+zadd +zcard +zcount +zrange +zrangebyscore +zrank +zrem +zremrangebyscore +zscore +zmscore"

	// aclAllPackages is the user of every package of the module.
	aclAllPackages = aclLimiterLock + " +type +hgetall +hsetnx +lpop +rpush +zremrangebyrank +zrevrangebyscore " +
		"+xadd +xlen +xreadgroup +xautoclaim +xack +xdel +xgroup|create"

	// aclSince72 is added to either line on Redis 7.2 and later, which
	// know CLIENT SETINFO, go-redis's first command on a connection.
	aclSince72 = " +client|setinfo"

	// aclCluster is added to either line for a Redis Cluster.
	aclCluster = " +spublish +ssubscribe +cluster|slots +command"
)

// aclUserName is the user the lines make.
const aclUserName = "slotlimit"

func TestACLLinesInDocs(t *testing.T) {
	data, err := os.ReadFile("docs/security.md")
	require.NoError(t, err)
	doc := string(data)
	for name, line := range map[string]string{"aclLimiterLock": aclLimiterLock, "aclAllPackages": aclAllPackages} {
		assert.Contains(t, doc, "\n"+line+"\n", "docs/security.md must hold %s word for word, on a line of its own", name)
	}
	for name, words := range map[string]string{"aclSince72": aclSince72, "aclCluster": aclCluster} {
		assert.Contains(t, doc, "`"+strings.TrimSpace(words)+"`", "docs/security.md must hold %s word for word", name)
	}
}

// aclServer is a redis-server of the test's own that listens only for
// TLS, with a certificate made for the test, and a user made by line.
type aclServer struct {
	addr  string
	admin *redis.Client // the default user, which the library's tests never use
	user  *redis.Client // the user of line, over a rediss:// URL
}

// startACLServer starts an aclServer with the user of line, and empties
// the ACL log, so that the log holds only what the user is then denied.
func startACLServer(t *testing.T, line string) *aclServer {
	t.Helper()
	srv, certs := redistest.StartTLSServer(t)
	s := &aclServer{addr: srv.Addr}
	s.admin = redis.NewClient(&redis.Options{Addr: srv.Addr, TLSConfig: certs.ClientConfig()})
	t.Cleanup(func() { s.admin.Close() })
	password := rand.Text()
	aclSetUser(t, s.admin, line, password)

	// As docs/security.md says to connect: a rediss:// URL, and the
	// authority that signed the server's certificate.
	opts, err := redis.ParseURL("rediss://" + aclUserName + ":" + password + "@" + srv.Addr)
	require.NoError(t, err)
	require.NotNil(t, opts.TLSConfig, "a rediss:// URL turns TLS on")
	opts.TLSConfig.RootCAs = certs.CertPool()
	s.user = redis.NewClient(opts)
	t.Cleanup(func() { s.user.Close() })

	ctx := context.Background()
	require.NoError(t, s.admin.ACLLogReset(ctx).Err())
	require.NoError(t, s.admin.ConfigResetStat(ctx).Err())
	return s
}

// aclSetUser runs line on admin's server, with password in place of
// PASSWORD, and aclSince72 added on a server that knows CLIENT SETINFO.
func aclSetUser(t *testing.T, admin *redis.Client, line, password string) {
	t.Helper()
	if aclVersionAtLeast(t, admin, 7, 2) {
		line += aclSince72
	}
	words := strings.Fields(strings.Replace(line, ">PASSWORD", ">"+password, 1))
	args := make([]any, len(words))
	for i, w := range words {
		args[i] = w
	}
	require.NoError(t, admin.Do(context.Background(), args...).Err(), "the ACL line, as docs/security.md gives it")
}

// aclVersionAtLeast reports whether the server of client is Redis
// major.minor or later.
func aclVersionAtLeast(t *testing.T, client *redis.Client, major, minor int) bool {
	t.Helper()
	info, err := client.Info(context.Background(), "server").Result()
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			parts := strings.SplitN(v, ".", 3)
			require.GreaterOrEqual(t, len(parts), 2, "redis_version %q", v)
			maj, err1 := strconv.Atoi(parts[0])
			mnr, err2 := strconv.Atoi(parts[1])
			require.NoError(t, errors.Join(err1, err2), "redis_version %q", v)
			return maj > major || maj == major && mnr >= minor
		}
	}
	t.Fatalf("no redis_version in INFO server:\n%s", info)
	return false
}

// denials returns the ACL log of admin's server, one line per entry.
func denials(t *testing.T, admin *redis.Client) []string {
	t.Helper()
	entries, err := admin.ACLLog(context.Background(), 1000).Result()
	require.NoError(t, err)
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = fmt.Sprintf("user %s denied %s %q (%s), %d times", e.Username, e.Reason, e.Object, e.Context, e.Count)
	}
	return lines
}

// errorStats returns the server's INFO errorstats section, lines
// such as "errorstat_NOPERM:count=2".
func (s *aclServer) errorStats(t *testing.T) string {
	t.Helper()
	stats, err := s.admin.Info(context.Background(), "errorstats").Result()
	require.NoError(t, err)
	return stats
}

// aclKey returns a key under the user's prefix, "app:", that no other test
// uses.
func aclKey(kind string) string {
	return "app:" + kind + ":" + aclRand()
}

// healthCheckIdle is a little longer than go-redis's pub/sub health check
// interval (3s): a subscription idle that long sends PING, which the user
// must be allowed, or the server denies it every few seconds.
const healthCheckIdle = 3500 * time.Millisecond

func TestACLUserRunsLimiterAndLockOverTLS(t *testing.T) {
	s := startACLServer(t, aclLimiterLock)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The server listens only for TLS: a plain connection gets nowhere.
	plain := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	require.Error(t, plain.Ping(ctx).Err(), "a plain connection to a TLS-only port")

	aclLimiterAndLock(ctx, t, s.user, s.admin)

	// With Config.Replicas, each write is followed by WAIT, which the
	// user may send: a server without replicas answers that none has the
	// write, and the call fails with ErrNotReplicated, not with NOPERM.
	t.Run("replicas", func(t *testing.T) {
		l := newLimiterOn(t, s.user, slotlimit.Config{Key: aclKey("ar"), Limit: 1, TTL: 10 * time.Second,
			Replicas: 1, ReplicaTimeout: 10 * time.Millisecond})
		_, err := l.TryAcquire(ctx, "h1")
		require.ErrorIs(t, err, slotlimit.ErrNotReplicated)
		m, err := lock.New(s.user, lock.Config{Key: aclKey("lock"), Replicas: 1, ReplicaTimeout: 10 * time.Millisecond})
		require.NoError(t, err)
		_, err = m.TryLock(ctx)
		require.ErrorIs(t, err, lock.ErrNotReplicated)
	})

	// Let the subscription idle until go-redis checks it with PING.
	time.Sleep(healthCheckIdle)

	assert.Empty(t, denials(t, s.admin), "ACL LOG")
	assert.NotContains(t, s.errorStats(t), "NOPERM")
	stats, err := s.admin.Info(ctx, "commandstats").Result()
	require.NoError(t, err)
	for _, cmd := range []string{"evalsha", "subscribe", "publish", "ping", "multi", "exec", "wait"} {
		assert.Contains(t, stats, "cmdstat_"+cmd+":", "the user's run sent no %s", strings.ToUpper(cmd))
	}
}

// On a Redis Cluster the line takes aclCluster too, on every node, since
// each node keeps its own users: neither the Cluster nor replication
// copies them.
func TestACLUserRunsLimiterAndLockOnCluster(t *testing.T) {
	addrs := redistest.ClusterAddrs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	password := rand.Text()
	nodes := make([]*redis.Client, len(addrs))
	for i, addr := range addrs {
		node := redis.NewClient(&redis.Options{Addr: addr})
		nodes[i] = node
		t.Cleanup(func() {
			node.Do(context.Background(), "acl", "deluser", aclUserName) //nolint:errcheck // the node may be gone
			node.Close()
		})
		aclSetUser(t, node, aclLimiterLock+aclCluster, password)
		require.NoError(t, node.ACLLogReset(ctx).Err())
	}
	admin := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { admin.Close() })
	user := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: aclUserName, Password: password})
	t.Cleanup(func() { user.Close() })

	aclLimiterAndLock(ctx, t, user, admin)
	t.Run("adaptive", func(t *testing.T) {
		require.NoError(t, aclAdaptive(ctx, user, admin, aclKey("adaptive"), false))
		require.NoError(t, aclAdaptive(ctx, user, admin, "app:{"+aclRand()+"}:pay", false))
	})

	time.Sleep(healthCheckIdle)
	for i, node := range nodes {
		assert.Empty(t, denials(t, node), "ACL LOG of %s", addrs[i])
	}
}

// aclLimiterAndLock runs the calls of a Limiter, a Counter and a
// lock.Mutex on user's client, with keys under "app:"; admin, the default
// user's client of the same servers, looks at the queues.
func aclLimiterAndLock(ctx context.Context, t *testing.T, user, admin redis.UniversalClient) {
	t.Run("limiter", func(t *testing.T) {
		rec := &observetest.Recorder{}
		key := aclKey("ar")
		l := newLimiterOn(t, user, slotlimit.Config{Key: key, Limit: 1, TTL: 10 * time.Second, Observer: rec})

		// A batch of tries, as concurrent callers send: acquire.lua's
		// batch path (ZMSCORE, one ZADD for every holder).
		batched := newLimiterOn(t, user, slotlimit.Config{Key: aclKey("batch"), Limit: 10, TTL: 10 * time.Second})
		results, err := batched.TryAcquireBatch(ctx, []string{"b1", "b2", "b3"})
		require.NoError(t, err)
		for _, r := range results {
			require.True(t, r.Acquired)
		}
		freed, err := batched.ReleaseBatch(ctx, []string{"b1", "b2", "b3"})
		require.NoError(t, err)
		require.Equal(t, []bool{true, true, true}, freed)

		res, err := l.TryAcquire(ctx, "h1")
		require.NoError(t, err)
		require.True(t, res.Acquired)
		err = l.Renew(ctx, "h1")
		require.NoError(t, err)
		n, err := l.Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		holders, err := l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, holders, 1)
		require.Equal(t, "h1", holders[0].ID)

		// h2 waits in the queue until h1's release hands it the slot
		// through a notice on the Limiter's channel. A periodic try of
		// h2's that the release overtakes takes the slot by itself, so the
		// hand-over runs again, a few times at most, until the notice is
		// what hands it over.
		handed := false
		for attempt := 1; attempt <= 3 && !handed; attempt++ {
			if attempt > 1 {
				require.NoError(t, l.Release(ctx, "h2"))
				res, err := l.TryAcquire(ctx, "h1")
				require.NoError(t, err)
				require.True(t, res.Acquired)
			}
			done := acquireAsync(ctx, l, "h2", 1)
			require.Eventually(t, func() bool {
				n, err := admin.ZCard(ctx, "{"+key+"}/q").Result()
				return err == nil && n == 1
			}, 5*time.Second, 5*time.Millisecond, "h2 never queued")
			aclAwaitSubscribed(ctx, t, admin, "{"+key+"}/free")
			rec.Take()
			err = l.Release(ctx, "h1")
			require.NoError(t, err)
			requireDone(t, done, 5*time.Second, "h2 was not handed the slot")
			handed = slices.Contains(observetest.Kinds(rec.Take()), observe.HandedOver)
		}
		require.True(t, handed, "h2 was handed the slot by the release's notice, not by polling")
		holders, err = l.Holders(ctx)
		require.NoError(t, err)
		require.Len(t, holders, 1)
		require.Equal(t, "h2", holders[0].ID)
		err = l.Release(ctx, "h2")
		require.NoError(t, err)
	})

	t.Run("fair", func(t *testing.T) {
		// In fair mode a try weighs what the waiters ahead of it want, and
		// CountRefusals counts the refusal in a key beside the Limiter's.
		key := aclKey("fair")
		l := newLimiterOn(t, user, slotlimit.Config{Key: key, Limit: 2, TTL: 10 * time.Second, Fair: true, CountRefusals: true})
		res, err := l.TryAcquireN(ctx, "h1", 2)
		require.NoError(t, err)
		require.True(t, res.Acquired)
		done := acquireAsync(ctx, l, "h2", 2)
		require.Eventually(t, func() bool {
			n, err := admin.ZCard(ctx, "{"+key+"}/q").Result()
			return err == nil && n == 1
		}, 5*time.Second, 5*time.Millisecond, "h2 never queued")
		res, err = l.TryAcquireN(ctx, "h1", 1) // frees a unit, too few for h2
		require.NoError(t, err)
		require.True(t, res.Acquired)
		res, err = l.TryAcquire(ctx, "h3")
		require.NoError(t, err)
		require.False(t, res.Acquired, "the free unit waits for h2, ahead in the queue")
		refusals, err := l.Refusals(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, refusals)
		err = l.Release(ctx, "h1")
		require.NoError(t, err)
		requireDone(t, done, 5*time.Second, "h2 was not handed its units")
		err = l.Release(ctx, "h2")
		require.NoError(t, err)
	})

	t.Run("counter", func(t *testing.T) {
		c, err := slotlimit.NewCounter(user, slotlimit.Config{Key: aclKey("count"), Limit: 1, TTL: 10 * time.Second})
		require.NoError(t, err)
		res, err := c.TryAcquire(ctx)
		require.NoError(t, err)
		require.True(t, res.Acquired)
		n, err := c.Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		err = c.Release(ctx)
		require.NoError(t, err)
	})

	t.Run("lock", func(t *testing.T) {
		// A key with a hash tag keeps its names beside it, as
		// "app:{lock:x}:lock:q", under "app:".
		rec := &observetest.Recorder{}
		key := "app:{lock:" + aclRand() + "}"
		m, err := lock.New(user, lock.Config{Key: key, TTL: 10 * time.Second, Observer: rec})
		require.NoError(t, err)

		first, err := m.TryLock(ctx)
		require.NoError(t, err)
		require.NoError(t, first.Refresh(ctx))
		_, err = m.TryLock(ctx)
		require.ErrorIs(t, err, lock.ErrNotObtained)

		// The second owner waits until the first's Unlock hands it the
		// lock through a notice on the lock's channel.
		got := make(chan error, 1)
		var second *lock.Lock
		go func() {
			var err error
			second, err = m.Lock(ctx)
			got <- err
		}()
		inspect, err := lock.New(admin, lock.Config{Key: key})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			info, err := inspect.Inspect(ctx)
			return err == nil && info.Waiters == 1
		}, 5*time.Second, 5*time.Millisecond, "the second owner never queued")
		aclAwaitSubscribed(ctx, t, admin, key+":lock:free")
		rec.Take()
		require.NoError(t, first.Unlock(ctx))
		requireDone(t, got, 5*time.Second, "the second owner was not handed the lock")
		require.Contains(t, observetest.Kinds(rec.Take()), observe.HandedOver,
			"the lock was handed over by the unlock's notice, not by polling")
		require.Greater(t, second.Fence(), first.Fence())
		require.NoError(t, second.Refresh(ctx))
		require.NoError(t, second.Unlock(ctx))
	})
}

// aclAwaitSubscribed waits until the server of channel counts a
// subscriber to it, so that a notice sent from then on reaches it.
func aclAwaitSubscribed(ctx context.Context, t *testing.T, admin redis.UniversalClient, channel string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var n atomic.Int64
		if cluster, ok := admin.(*redis.ClusterClient); ok {
			cluster.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error { //nolint:errcheck // counted below
				subs, _ := shard.PubSubShardNumSub(ctx, channel).Result()
				n.Add(subs[channel])
				return nil
			})
		} else {
			subs, _ := admin.PubSubNumSub(ctx, channel).Result()
			n.Add(subs[channel])
		}
		return n.Load() > 0
	}, 5*time.Second, 5*time.Millisecond, "nobody subscribed to %s", channel)
}

func TestACLKeyOutsidePrefixFailsWithNOPERM(t *testing.T) {
	s := startACLServer(t, aclLimiterLock)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// requireNOPERM checks that err is Redis's NOPERM reply, under the
	// library's prefix that names the package, the operation and the key.
	requireNOPERM := func(t *testing.T, err error, prefix string) {
		t.Helper()
		require.Error(t, err)
		var reply redis.Error
		require.True(t, errors.As(err, &reply), "%v is not a Redis reply", err)
		require.True(t, strings.HasPrefix(reply.Error(), "NOPERM "), "reply %q", reply.Error())
		require.True(t, strings.HasPrefix(err.Error(), prefix+"NOPERM "), "error %q, want it to begin %q", err, prefix+"NOPERM ")
		require.NotErrorIs(t, err, context.DeadlineExceeded)
	}

	key := "other:ar:1"
	t.Run("limiter", func(t *testing.T) {
		l := newLimiterOn(t, s.user, slotlimit.Config{Key: key, Limit: 1, TTL: 10 * time.Second})
		_, err := l.TryAcquire(ctx, "h1")
		requireNOPERM(t, err, `slotlimit: try acquire "other:ar:1": `)
		_, err = l.Acquire(ctx, "h1")
		requireNOPERM(t, err, `slotlimit: acquire "other:ar:1": `)
		err = l.Renew(ctx, "h1")
		requireNOPERM(t, err, `slotlimit: renew "other:ar:1": `)
		_, err = l.Count(ctx)
		requireNOPERM(t, err, `slotlimit: count "other:ar:1": `)
		_, err = l.Holders(ctx)
		requireNOPERM(t, err, `slotlimit: holders "other:ar:1": `)
		err = l.Release(ctx, "h1")
		requireNOPERM(t, err, `slotlimit: release "other:ar:1": `)
	})

	lockKey := "other:lock:1"
	t.Run("lock", func(t *testing.T) {
		m, err := lock.New(s.user, lock.Config{Key: lockKey, TTL: 10 * time.Second})
		require.NoError(t, err)
		_, err = m.TryLock(ctx)
		requireNOPERM(t, err, `lock: try lock "other:lock:1": `)
		_, err = m.Lock(ctx)
		requireNOPERM(t, err, `lock: lock "other:lock:1": `)
	})

	// A key the prefix does not cover is turned away before any script
	// runs, and the server writes nothing.
	n, err := s.admin.Exists(ctx, key, "{"+key+"}/w", "{"+key+"}/q", lockKey, "{"+lockKey+"}/q").Result()
	require.NoError(t, err)
	require.Zero(t, n)

	// The server logs each denial, with the user and the key, or the
	// channel that Acquire and Lock subscribe to before they try.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logged := strings.Join(denials(t, s.admin), "\n")
		for _, want := range []string{"key " + strconv.Quote(key), "key " + strconv.Quote(lockKey),
			"channel " + strconv.Quote("{"+key+"}/free"), "channel \"{" + lockKey + "}/"} {
			assert.Contains(c, logged, "user "+aclUserName+" denied "+want)
		}
	}, 5*time.Second, 20*time.Millisecond)
	assert.Contains(t, s.errorStats(t), "errorstat_NOPERM:")
}

// The ACL line for every package: each one's calls, as its user, with
// keys and channels under "app:" and the redpacket Store's Prefix
// "app:rp", whose hash tags begin "{app:rp:".
func TestACLUserRunsEveryPackageOverTLS(t *testing.T) {
	s := startACLServer(t, aclAllPackages)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("ratelimit", func(t *testing.T) { aclRateLimit(ctx, t, s.user) })
	t.Run("recent", func(t *testing.T) { aclRecent(ctx, t, s.user) })
	t.Run("delayqueue", func(t *testing.T) { aclDelayQueue(ctx, t, s.user) })
	t.Run("redpacket", func(t *testing.T) { aclRedPacket(ctx, t, s.user) })
	time.Sleep(healthCheckIdle)

	assert.Empty(t, denials(t, s.admin), "ACL LOG")
	assert.NotContains(t, s.errorStats(t), "NOPERM")
}

// aclCheck fails t with the step's name when err is not nil.
func aclCheck(t *testing.T, step string, err error) {
	t.Helper()
	require.NoError(t, err, step)
}

// aclRand returns a few random characters, for names no other test uses.
func aclRand() string { return rand.Text()[:8] }
