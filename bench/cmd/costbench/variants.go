package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/keycycle"
	"github.com/slotlimit/slotlimit/bench/internal/lockpairs"
	"github.com/slotlimit/slotlimit/bench/internal/packetload"
	"github.com/slotlimit/slotlimit/bench/internal/queues"
	"github.com/slotlimit/slotlimit/bench/internal/recentload"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The minimal ZSET lease scripts: the least a limiter of leases that lapse
// must run, with the caller's clock. leaseAcquire: KEYS[1] the lease set;
// ARGV[1] now in ms, ARGV[2] the lease in ms, ARGV[3] the limit, ARGV[4]
// the holder. It prunes the leases that lapsed, counts the rest, and below
// the limit adds the holder's lease and sets the key's expiry; it returns
// 1 when it granted the lease, else 0. leaseRelease: KEYS[1] the lease
// set, ARGV[1] the holder; it removes the holder's lease.
const (
	leaseAcquire = "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])\n" +
		"if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end\n" +
		"redis.call('ZADD', KEYS[1], ARGV[1] + ARGV[2], ARGV[4])\n" +
		"redis.call('PEXPIRE', KEYS[1], ARGV[2])\n" +
		"return 1\n"
	leaseRelease = "return redis.call('ZREM', KEYS[1], ARGV[1])\n"
)

// scripts are the scripts the benchmark runs by EVALSHA itself.
type scripts struct {
	leaseAcquire, leaseRelease harness.Script
	cad                        harness.Script // the bare lock's compare-and-delete
	window                     harness.Script // the classic fixed-window script
	grab                       harness.Script // the classic grab script
	recentAdd                  harness.Script // the classic recent-list script
}

func newScripts() scripts {
	return scripts{
		leaseAcquire: harness.NewScript(leaseAcquire),
		leaseRelease: harness.NewScript(leaseRelease),
		cad:          harness.NewScript(classic.CompareAndDelete),
		window:       harness.NewScript(classic.FixedWindow),
		grab:         harness.NewScript(classic.Grab),
		recentAdd:    harness.NewScript(classic.RecentAdd),
	}
}

func (s scripts) all() []harness.Script {
	return []harness.Script{s.leaseAcquire, s.leaseRelease, s.cad, s.window, s.grab, s.recentAdd}
}

// Shapes of the scenarios that no flag changes.
const (
	highLimit = 1000        // a limit the limiter's load never reaches
	leaseTTL  = time.Minute // every limiter lease
	window    = time.Hour   // every rate limit's period
)

// Names of the variants, each row's library first.
const (
	nameLimiter   = "slotlimit Limiter: TryAcquire + Release"
	nameLease     = "minimal ZSET lease scripts: ZREMRANGEBYSCORE, ZCARD, ZADD, PEXPIRE + ZREM"
	nameIncrDecr  = "raw INCR + DECR"
	nameLock      = "slotlimit lock: TryLock + Unlock"
	nameBareLock  = "SET NX PX + compare-and-delete script"
	nameRedislock = "bsm/redislock: Obtain (no retry) + Release"
	nameRedsync   = "go-redsync/redsync/v4: TryLockContext + UnlockContext"
	nameGCRA      = "slotlimit ratelimit: Allow, GCRA"
	nameRedisRate = "go-redis/redis_rate/v10: Allow"
	nameWindow    = "slotlimit ratelimit: Allow, FixedWindow"
	nameSeedWin   = "classic INCR + EXPIRE-on-first-hit script"
	nameGrab      = "slotlimit redpacket: Store.Grab"
	nameSeedGrab  = "classic HGET/HSET/RPUSH grab script"
	nameRecent    = "slotlimit recent: List.Add"
	nameSeedAdd   = "classic ZADD/ZCARD/ZREMRANGEBYRANK script"
)

// Paths of the modules whose versions the report names.
const (
	modRedislock = lockpairs.ModRedislock
	modRedsync   = lockpairs.ModRedsync
	modRedisRate = "github.com/go-redis/redis_rate/v10"
	modAsynq     = queues.ModAsynq
	modGoRedis   = "github.com/redis/go-redis/v9"
)

func ids(format string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf(format, i)
	}
	return s
}

// pair returns a call that runs acquire, then release.
func pair(acquire, release func(ctx context.Context, w int) error) func(ctx context.Context, w int) error {
	return func(ctx context.Context, w int) error {
		if err := acquire(ctx, w); err != nil {
			return err
		}
		return release(ctx, w)
	}
}

// limiterRow is the limiter's pairs, distinct holders on one key whose
// limit is never reached, against the minimal lease scripts on a key of
// their own and INCR+DECR of a plain counter.
func (b *bench) limiterRow(ctx context.Context) ([]result, error) {
	c := b.Client
	holders := ids("worker-%d", b.Workers)
	l, err := slotlimit.New(c, slotlimit.Config{Key: b.Key("limiter"), Limit: highLimit, TTL: leaseTTL})
	if err != nil {
		return nil, err
	}
	leaseKey := []string{b.Key("lease")}
	ttl, limit := strconv.FormatInt(leaseTTL.Milliseconds(), 10), strconv.Itoa(highLimit)
	counter := b.Key("incr")
	return b.runCalls(ctx, []variant{
		{name: nameLimiter, call: pair(func(ctx context.Context, w int) error {
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = fmt.Errorf("TryAcquire refused %s: %d of %d held", holders[w], res.Count, res.Limit)
			}
			return err
		}, func(ctx context.Context, w int) error {
			return l.Release(ctx, holders[w])
		})},
		{name: nameLease, commands: []string{"evalsha"}, call: pair(func(ctx context.Context, w int) error {
			now := strconv.FormatInt(time.Now().UnixMilli(), 10)
			n, err := c.EvalSha(ctx, b.scripts.leaseAcquire.SHA, leaseKey, now, ttl, limit, holders[w]).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("lease script refused %s", holders[w])
			}
			return err
		}, func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, b.scripts.leaseRelease.SHA, leaseKey, holders[w]).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("lease script: %s held no lease", holders[w])
			}
			return err
		})},
		{name: nameIncrDecr, commands: []string{"incr", "decr"}, call: pair(func(ctx context.Context, _ int) error {
			return c.Incr(ctx, counter).Err()
		}, func(ctx context.Context, _ int) error {
			return c.Decr(ctx, counter).Err()
		})},
	})
}

// fromPair returns p as a variant that runs a pair per call, its
// commands checked.
func fromPair(p harness.Pairer) variant {
	return variant{name: p.Name, commands: p.Commands, call: pair(p.Acquire, p.Release)}
}

// lockRow is the lock's pairs, each worker on a key of its own, against a
// bare SET NX PX with the compare-and-delete script, and the two peers.
func (b *bench) lockRow(ctx context.Context) ([]result, error) {
	keys := func(variant string) []string {
		k := make([]string, b.Workers)
		for w := range k {
			k[w] = b.Key(fmt.Sprintf("%s:%d", variant, w))
		}
		return k
	}
	lockKeys := keys("lock")
	mutexes := make([]*lock.Mutex, b.Workers)
	for w, key := range lockKeys {
		var err error
		if mutexes[w], err = lock.New(b.Client, lock.Config{Key: key, TTL: lockpairs.TTL}); err != nil {
			return nil, err
		}
	}
	held := make([]*lock.Lock, b.Workers)
	return b.runCalls(ctx, []variant{
		{name: nameLock, call: pair(func(ctx context.Context, w int) (err error) {
			held[w], err = mutexes[w].TryLock(ctx)
			return err
		}, func(ctx context.Context, w int) error {
			return held[w].Unlock(ctx)
		})},
		fromPair(lockpairs.Bare(nameBareLock, b.Client, b.scripts.cad, keys("bare"))),
		fromPair(lockpairs.Redislock(nameRedislock, b.Client, keys("redislock"))),
		fromPair(lockpairs.Redsync(nameRedsync, b.Client, keys("redsync"))),
	})
}

// keyed returns a call for worker w that calls allow on each of the
// worker's keys -calls-per-key times in a row, then on a key never used,
// the keys beginning with prefix (see keycycle).
func (b *bench) keyed(prefix string, allow func(ctx context.Context, key string) error) func(ctx context.Context, w int) error {
	keys := keycycle.New(prefix, b.Workers, b.callsPerKey)
	return func(ctx context.Context, w int) error {
		return allow(ctx, keys.Next(w))
	}
}

// gcraRow is Allow with GCRA against redis_rate's Allow, both of -rate per
// hour with a burst of -rate.
func (b *bench) gcraRow(ctx context.Context) ([]result, error) {
	lim, err := ratelimit.New(b.Client, ratelimit.Config{})
	if err != nil {
		return nil, err
	}
	limit := ratelimit.Limit{Rate: b.rate, Period: window, Burst: b.rate, Algorithm: ratelimit.GCRA}
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("-rate: %w", err)
	}
	rr := redis_rate.NewLimiter(b.Client)
	rrLimit := redis_rate.Limit{Rate: int(b.rate), Burst: int(b.rate), Period: window}
	return b.runCalls(ctx, []variant{
		{name: nameGCRA, call: b.keyed(b.Key("gcra"), func(ctx context.Context, key string) error {
			_, err := lim.Allow(ctx, key, limit)
			return err
		})},
		{name: nameRedisRate, call: b.keyed(b.Key("redisrate"), func(ctx context.Context, key string) error {
			_, err := rr.Allow(ctx, key, rrLimit)
			return err
		})},
	})
}

// windowRow is Allow with FixedWindow against the classic script, both of
// -rate per hour.
func (b *bench) windowRow(ctx context.Context) ([]result, error) {
	c := b.Client
	lim, err := ratelimit.New(c, ratelimit.Config{})
	if err != nil {
		return nil, err
	}
	limit := ratelimit.Limit{Rate: b.rate, Period: window, Algorithm: ratelimit.FixedWindow}
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("-rate: %w", err)
	}
	threshold, seconds := strconv.FormatInt(b.rate, 10), strconv.FormatInt(int64(window/time.Second), 10)
	return b.runCalls(ctx, []variant{
		{name: nameWindow, call: b.keyed(b.Key("window"), func(ctx context.Context, key string) error {
			_, err := lim.Allow(ctx, key, limit)
			return err
		})},
		{name: nameSeedWin, commands: []string{"evalsha"}, call: b.keyed(b.Key("seedwindow"), func(ctx context.Context, key string) error {
			return c.EvalSha(ctx, b.scripts.window.SHA, []string{key}, threshold, seconds).Err()
		})},
	})
}

// grabRow is Grab against the classic script: each variant creates
// -packets packets of -shares shares, then grabs them in order, every grab
// by a user of its own, and no phase goes past the last share; a grab
// refused fails the run.
func (b *bench) grabRow(ctx context.Context) ([]result, error) {
	store, err := redpacket.New(b.Client, redpacket.Config{Prefix: b.Key("store")})
	if err != nil {
		return nil, err
	}
	packetIDs := ids("p%d", b.packets)
	total := int64(b.packets) * int64(b.shares)
	// grabs creates the packets of ps, and returns a call that takes the
	// next share, and the count of shares left for it.
	grabs := func(ps packetload.Packets) (variant, error) {
		for _, id := range packetIDs {
			if err := ps.Create(ctx, id, b.shares); err != nil {
				return variant{}, err
			}
		}
		var next atomic.Int64
		call := func(ctx context.Context, _ int) error {
			j := next.Add(1) - 1
			if j >= total {
				return fmt.Errorf("grab %d: every share is taken", j+1)
			}
			id := packetIDs[j/int64(b.shares)]
			took, err := ps.Grab(ctx, id, packetload.User(j))
			if err == nil && !took {
				err = fmt.Errorf("packet %s: grab %d of %d found it sold out", id, j%int64(b.shares)+1, b.shares)
			}
			return err
		}
		return variant{call: call, left: func() int64 { return max(total-next.Load(), 0) }}, nil
	}
	lib, err := grabs(packetload.Store{S: store})
	if err != nil {
		return nil, err
	}
	seed, err := grabs(packetload.Classic{C: b.Client, SHA: b.scripts.grab.SHA, Tag: b.Key("seed:")})
	if err != nil {
		return nil, err
	}
	lib.name = nameGrab
	seed.name, seed.commands = nameSeedGrab, []string{"evalsha"}
	return b.runCalls(ctx, []variant{lib, seed})
}

// recentRow is Add against the classic script: each worker owns
// -recent-users lists of each variant, filled with -recent-max values
// through the variant's own Add before the load, then adds a new value to
// each in turn, so that every Add of the load adds one item and drops the
// oldest.
func (b *bench) recentRow(ctx context.Context) ([]result, error) {
	c := b.Client
	lists := make([][]*recent.List, b.Workers)
	seedKeys := make([][]string, b.Workers)
	for w := range b.Workers {
		lists[w] = make([]*recent.List, b.recentUsers)
		seedKeys[w] = make([]string, b.recentUsers)
		for u := range b.recentUsers {
			l, err := recent.New(c, recent.Config{Key: b.Key(fmt.Sprintf("recent:%d:%d", w, u)), Max: b.recentMax})
			if err != nil {
				return nil, fmt.Errorf("-recent-max: %w", err)
			}
			lists[w][u] = l
			seedKeys[w][u] = b.Key(fmt.Sprintf("seedrecent:%d:%d", w, u))
		}
	}
	maxItems := strconv.FormatInt(b.recentMax, 10)
	// adds returns a call whose i-th for worker w adds the worker's i-th
	// value to its list i mod -recent-users.
	adds := func(add func(ctx context.Context, w, u int, value string) error) func(ctx context.Context, w int) error {
		calls := make([]struct {
			n int64
			_ [56]byte // keeps workers off each other's cache lines
		}, b.Workers)
		return func(ctx context.Context, w int) error {
			i := calls[w].n
			calls[w].n++
			return add(ctx, w, int(i%int64(b.recentUsers)), recentload.Value(w, i))
		}
	}
	vs := []variant{
		{name: nameRecent, call: adds(func(ctx context.Context, w, u int, value string) error {
			return lists[w][u].Add(ctx, value)
		})},
		{name: nameSeedAdd, commands: []string{"evalsha"}, call: adds(func(ctx context.Context, w, u int, value string) error {
			return c.EvalSha(ctx, b.scripts.recentAdd.SHA, seedKeys[w][u:u+1], value, time.Now().Unix(), maxItems).Err()
		})},
	}
	// Fill every list, every worker its own at once.
	for _, v := range vs {
		if err := recentload.Fill(ctx, b.Workers, int64(b.recentUsers)*b.recentMax, v.call); err != nil {
			return nil, fmt.Errorf("filling %s: %w", v.name, err)
		}
	}
	return b.runCalls(ctx, vs)
}
