package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redis/redis_rate/v10"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// Shapes of the scenarios that no flag changes.
const (
	highLimit   = 1000             // a limit the limiter's load never reaches
	leaseTTL    = time.Minute      // every limiter lease
	lockTTL     = 30 * time.Second // every lock's lease
	window      = time.Hour        // the fixed window's period
	hotBurst    = 100              // the hot GCRA key's burst
	shareAmount = 100              // every share, in cents: Equal, as the classic unit amount
)

// Names of the variants, each row's library first.
const (
	nameLimiter   = "slotlimit Limiter: TryAcquire + Release"
	nameLease     = "minimal ZSET lease scripts"
	nameIncrDecr  = "raw INCR + DECR"
	nameOff       = "slotlimit Limiter, DisableCoalescing: TryAcquire + Release"
	nameGCRA      = "slotlimit ratelimit: Allow, GCRA"
	nameRedisRate = "go-redis/redis_rate/v10: Allow"
	nameGrab      = "slotlimit redpacket: Grab"
	nameClassic   = "classic grab script"
	nameLock      = "slotlimit lock: TryLock + Unlock"
	nameBareLock  = "SET NX PX + compare-and-delete script"
	nameRedislock = "bsm/redislock: Obtain (no retry) + Release"
	nameRedsync   = "go-redsync/redsync/v4: TryLockContext + UnlockContext"
	nameWindow    = "slotlimit ratelimit: Allow, FixedWindow"
	nameClassicFW = "classic INCR + EXPIRE-on-first-hit script"
	nameRecent    = "slotlimit recent: List.Add"
	nameClassicRA = "classic ZADD/ZCARD/ZREMRANGEBYRANK script"
)

// Paths of the modules whose versions the report names.
var peerModules = []string{"github.com/bsm/redislock", "github.com/go-redsync/redsync/v4", "github.com/go-redis/redis_rate/v10", "github.com/hibiken/asynq", "github.com/redis/go-redis/v9"}

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
// their own and INCR+DECR of a plain counter, and beside them the limiter
// with coalescing off, on a key of its own.
func (b *bench) limiterRow(ctx context.Context) ([][]result, error) {
	c := b.Client
	holders := ids("worker-%d", max(b.Workers, b.crowd))
	l, err := slotlimit.New(c, slotlimit.Config{Key: b.Key("limiter"), Limit: highLimit, TTL: leaseTTL})
	if err != nil {
		return nil, err
	}
	leaseKey := []string{b.Key("lease")}
	ttl, limit := strconv.FormatInt(leaseTTL.Milliseconds(), 10), strconv.Itoa(highLimit)
	counter := b.Key("incr")
	off, err := slotlimit.New(c, slotlimit.Config{Key: b.Key("limiter-off"), Limit: highLimit, TTL: leaseTTL, DisableCoalescing: true})
	if err != nil {
		return nil, err
	}
	pairs := func(l *slotlimit.Limiter) func(ctx context.Context, w int) error {
		return pair(func(ctx context.Context, w int) error {
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = fmt.Errorf("TryAcquire refused %s: %d of %d held", holders[w], res.Count, res.Limit)
			}
			return err
		}, func(ctx context.Context, w int) error {
			return l.Release(ctx, holders[w])
		})
	}
	// The library with coalescing off comes last, so that the rows'
	// indexes of the others stay.
	return b.runCalls(ctx, b.callers(), []variant{
		{name: nameLimiter, call: pairs(l)},
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
		{name: nameOff, call: pairs(off)},
	})
}

// gcraRow is Allow with GCRA on one hot key against redis_rate's Allow on
// another, both of -hot-rate per second with a burst of hotBurst: a rate
// that the load passes, so that each key both allows and refuses.
func (b *bench) gcraRow(ctx context.Context) ([][]result, error) {
	lim, err := ratelimit.New(b.Client, ratelimit.Config{})
	if err != nil {
		return nil, err
	}
	limit := ratelimit.Limit{Rate: b.hotRate, Period: time.Second, Burst: hotBurst, Algorithm: ratelimit.GCRA}
	if err := limit.Validate(); err != nil {
		return nil, fmt.Errorf("-hot-rate: %w", err)
	}
	rr := redis_rate.NewLimiter(b.Client)
	rrLimit := redis_rate.Limit{Rate: int(b.hotRate), Burst: hotBurst, Period: time.Second}
	libKey, rrKey := b.Key("gcra"), b.Key("redisrate")
	var libHits, rrHits atomic.Int64
	return b.runCalls(ctx, b.callers(), []variant{
		{name: nameGCRA, hits: &libHits, call: func(ctx context.Context, _ int) error {
			res, err := lim.Allow(ctx, libKey, limit)
			if err == nil && res.Allowed {
				libHits.Add(1)
			}
			return err
		}},
		{name: nameRedisRate, hits: &rrHits, call: func(ctx context.Context, _ int) error {
			res, err := rr.Allow(ctx, rrKey, rrLimit)
			if err == nil && res.Allowed > 0 {
				rrHits.Add(1)
			}
			return err
		}},
	})
}

// grabRow is Grab against the classic script, on one packet: before each
// phase a variant creates a packet of -shares shares, and the phase grabs
// it, every grab by a user of its own, and ends before it is sold out; a
// grab refused fails the run.
func (b *bench) grabRow(ctx context.Context) ([][]result, error) {
	store, err := redpacket.New(b.Client, redpacket.Config{Prefix: b.Key("store")})
	if err != nil {
		return nil, err
	}
	// grabs returns a variant that creates a packet with create before
	// each phase, then grabs the next share of it with grab.
	grabs := func(name string, commands []string, create func(ctx context.Context, id string) error, grab func(ctx context.Context, id, user string) error) variant {
		var next atomic.Int64
		packets := 0
		id := ""
		return variant{name: name, commands: commands,
			prepare: func(ctx context.Context) (int64, error) {
				packets++
				id = "p" + strconv.Itoa(packets)
				next.Store(0)
				return int64(b.shares), create(ctx, id)
			},
			call: func(ctx context.Context, _ int) error {
				return grab(ctx, id, strconv.FormatInt(1_000_000_000+next.Add(1), 10))
			}}
	}
	tag := b.Key("classic:")
	return b.runCalls(ctx, b.callers(), []variant{
		grabs(nameGrab, nil, func(ctx context.Context, id string) error {
			return store.Create(ctx, redpacket.Packet{ID: id, Total: shareAmount * int64(b.shares), Count: b.shares, Split: redpacket.Equal})
		}, func(ctx context.Context, id, user string) error {
			c, err := store.Grab(ctx, id, user)
			if err == nil && (c.Amount != shareAmount || c.User != user) {
				err = fmt.Errorf("packet %s: user %s got %+v", id, user, c)
			}
			return err
		}),
		grabs(nameClassic, []string{"evalsha"}, func(ctx context.Context, id string) error {
			return b.Client.HSet(ctx, "red_packet_"+tag+id, "stock", b.shares, "unit_amount", "1.00").Err()
		}, func(ctx context.Context, id, user string) error {
			arg := user + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
			n, err := b.Client.EvalSha(ctx, b.scripts.grab.SHA, []string{tag + id}, arg).Int64()
			if err == nil && n != 1 && n != 2 {
				err = fmt.Errorf("packet %s: the classic script replied %d", id, n)
			}
			return err
		}),
	})
}

// keys returns a key of the run for each of the workers, named after
// variant.
func (b *bench) keys(variant string) []string {
	k := make([]string, b.Workers)
	for w := range k {
		k[w] = b.Key(fmt.Sprintf("%s:%d", variant, w))
	}
	return k
}

// lockRow is the lock's pairs, each worker on a key of its own, against a
// bare SET NX PX with the compare-and-delete script, and the two peers.
func (b *bench) lockRow(ctx context.Context) ([][]result, error) {
	c := b.Client
	mutexes := make([]*lock.Mutex, b.Workers)
	for w, key := range b.keys("lock") {
		var err error
		if mutexes[w], err = lock.New(c, lock.Config{Key: key, TTL: lockTTL}); err != nil {
			return nil, err
		}
	}
	held := make([]*lock.Lock, b.Workers)
	bare, tokens := b.keys("bare"), make([]string, b.Workers)
	ttl := strconv.FormatInt(lockTTL.Milliseconds(), 10)
	rl, rlKeys, rlHeld := redislock.New(c), b.keys("redislock"), make([]*redislock.Lock, b.Workers)
	rs := redsync.New(goredis.NewPool(c))
	rsMutexes := make([]*redsync.Mutex, b.Workers)
	for w, key := range b.keys("redsync") {
		rsMutexes[w] = rs.NewMutex(key, redsync.WithExpiry(lockTTL), redsync.WithTries(1))
	}
	errNotHeld := errors.New("the unlock found the lock not held")
	return b.runCalls(ctx, []int{b.Workers}, []variant{
		{name: nameLock, call: pair(func(ctx context.Context, w int) (err error) {
			held[w], err = mutexes[w].TryLock(ctx)
			return err
		}, func(ctx context.Context, w int) error {
			return held[w].Unlock(ctx)
		})},
		{name: nameBareLock, commands: []string{"set", "evalsha"}, call: pair(func(ctx context.Context, w int) error {
			tokens[w] = rand.Text()
			return c.Do(ctx, "set", bare[w], tokens[w], "nx", "px", ttl).Err()
		}, func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, b.scripts.cad.SHA, bare[w:w+1], tokens[w]).Int64()
			if err == nil && n != 1 {
				err = errNotHeld
			}
			return err
		})},
		{name: nameRedislock, commands: []string{"evalsha"}, call: pair(func(ctx context.Context, w int) (err error) {
			rlHeld[w], err = rl.Obtain(ctx, rlKeys[w], lockTTL, &redislock.Options{RetryStrategy: redislock.NoRetry()})
			return err
		}, func(ctx context.Context, w int) error {
			return rlHeld[w].Release(ctx)
		})},
		{name: nameRedsync, commands: []string{"set", "evalsha"}, call: pair(func(ctx context.Context, w int) error {
			return rsMutexes[w].TryLockContext(ctx)
		}, func(ctx context.Context, w int) error {
			ok, err := rsMutexes[w].UnlockContext(ctx)
			if err == nil && !ok {
				err = errNotHeld
			}
			return err
		})},
	})
}

// perWorker returns a call for worker w whose i-th call is call(ctx, w,
// i), i counted for each worker.
func (b *bench) perWorker(call func(ctx context.Context, w int, i int64) error) func(ctx context.Context, w int) error {
	calls := make([]struct {
		n int64
		_ [56]byte // keeps workers off each other's cache lines
	}, b.Workers)
	return func(ctx context.Context, w int) error {
		i := calls[w].n
		calls[w].n++
		return call(ctx, w, i)
	}
}

// windowRow is Allow with FixedWindow against the classic script, both of
// -rate per hour, each worker calling each of its keys -calls-per-key
// times in a row, then a key never used, so that the mix of new keys,
// allowed calls and refusals is the same for both.
func (b *bench) windowRow(ctx context.Context) ([][]result, error) {
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
	keyed := func(prefix string, allow func(ctx context.Context, key string) error) func(ctx context.Context, w int) error {
		return b.perWorker(func(ctx context.Context, w int, i int64) error {
			return allow(ctx, fmt.Sprintf("%s:%d:%d", b.Key(prefix), w, i/b.callsPerKey))
		})
	}
	return b.runCalls(ctx, []int{b.Workers}, []variant{
		{name: nameWindow, call: keyed("window", func(ctx context.Context, key string) error {
			_, err := lim.Allow(ctx, key, limit)
			return err
		})},
		{name: nameClassicFW, commands: []string{"evalsha"}, call: keyed("classicwindow", func(ctx context.Context, key string) error {
			return c.EvalSha(ctx, b.scripts.window.SHA, []string{key}, threshold, seconds).Err()
		})},
	})
}

// recentRow is Add against the classic script: each worker owns
// -recent-users lists of each variant, filled with -recent-max values
// through the variant's own Add before the load, then adds a new value to
// each in turn, so that every Add of the load adds one item and drops the
// oldest.
func (b *bench) recentRow(ctx context.Context) ([][]result, error) {
	c := b.Client
	lists := make([][]*recent.List, b.Workers)
	classicKeys := make([][]string, b.Workers)
	for w := range b.Workers {
		for u := range b.recentUsers {
			l, err := recent.New(c, recent.Config{Key: b.Key(fmt.Sprintf("recent:%d:%d", w, u)), Max: b.recentMax})
			if err != nil {
				return nil, fmt.Errorf("-recent-max: %w", err)
			}
			lists[w] = append(lists[w], l)
			classicKeys[w] = append(classicKeys[w], b.Key(fmt.Sprintf("classicrecent:%d:%d", w, u)))
		}
	}
	maxItems := strconv.FormatInt(b.recentMax, 10)
	// Worker w's i-th call adds an 18-byte value of its own to its list i
	// mod -recent-users.
	adds := func(add func(ctx context.Context, w, u int, value string) error) func(ctx context.Context, w int) error {
		return b.perWorker(func(ctx context.Context, w int, i int64) error {
			return add(ctx, w, int(i%int64(b.recentUsers)), fmt.Sprintf("item:%03d:%09d", w, i))
		})
	}
	vs := []variant{
		{name: nameRecent, call: adds(func(ctx context.Context, w, u int, value string) error {
			return lists[w][u].Add(ctx, value)
		})},
		{name: nameClassicRA, commands: []string{"evalsha"}, call: adds(func(ctx context.Context, w, u int, value string) error {
			return c.EvalSha(ctx, b.scripts.recentAdd.SHA, classicKeys[w][u:u+1], value, time.Now().Unix(), maxItems).Err()
		})},
	}
	// Fill every list, every worker its own at once.
	for _, v := range vs {
		var wg sync.WaitGroup
		errs := make([]error, b.Workers)
		for w := range b.Workers {
			wg.Go(func() {
				for range int64(b.recentUsers) * b.recentMax {
					if errs[w] = v.call(ctx, w); errs[w] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("filling %s: %w", v.name, err)
		}
	}
	return b.runCalls(ctx, []int{b.Workers}, vs)
}
