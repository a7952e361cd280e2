package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/lockpairs"
	"github.com/slotlimit/slotlimit/lock"
)

// lockTTL is every variant's lease time: long enough that no lock lapses
// in a run.
const lockTTL = lockpairs.TTL

// ttlMillis is lockTTL as the scripts take it.
var ttlMillis = lockpairs.TTLMillis

// compareAndDelete is the bare lock's unlock: delete the key if it still
// holds the owner's token. KEYS[1] the lock, ARGV[1] the token.
const compareAndDelete = classic.CompareAndDelete

// the classic two scripts, verbatim. seedLock: KEYS[1] the lock, ARGV[1]
// the lease in ms, ARGV[2] the token; seedUnlock: KEYS[1] the lock,
// ARGV[1] the token.
const (
	seedLock   = classic.Lock
	seedUnlock = classic.Unlock
)

// scripts are the scripts the benchmark runs by EVALSHA itself.
type scripts struct {
	cad                  harness.Script // compareAndDelete
	seedLock, seedUnlock harness.Script
}

// Names of the variants, in the order of the report.
const (
	nameBare      = "bare: SET NX PX + compare-and-delete script"
	nameSeed      = "the classic scripts"
	nameRedislock = "bsm/redislock: Obtain (no retry) + Release"
	nameRedsync   = "go-redsync/redsync/v4, goredis v9 pool: TryLockContext + UnlockContext"
	nameLock      = "slotlimit lock: TryLock + Unlock (fenced)"

	// Bounds of the fenced pair, not targets: the cheapest pair measured
	// that returns a fence on the server's clock, and the lock's TryLock
	// with the bare lock's unlock.
	nameMultiFence = "fence by MULTI, no raise: MULTI, SET NX GET PX, TIME, EXEC + compare-and-delete script"
	nameTryLockCAD = "TryLock + bare compare-and-delete script"
)

// Top-level commands, as INFO commandstats names them. A MULTI ... EXEC
// is two: the SET and TIME queued between them run within EXEC, whose
// time includes theirs.
var (
	commandsTryLock = []string{"multi", "exec"}            // lock.Mutex.TryLock, and the fence by MULTI
	commandsFenced  = []string{"multi", "exec", "evalsha"} // either, then an unlock script
)

// Paths of the peer modules, whose versions the report names.
const (
	modRedislock = lockpairs.ModRedislock
	modRedsync   = lockpairs.ModRedsync
)

var errNotHeld = lockpairs.ErrNotHeld

// variants returns the pairers of the pair phase, each worker w on keys of
// its own, the bare lock first.
func (b *bench) variants() ([]harness.Pairer, error) {
	keys := func(variant string) []string {
		k := make([]string, b.Workers)
		for w := range k {
			k[w] = b.Key(fmt.Sprintf("%s:%d", variant, w))
		}
		return k
	}
	tc, err := tryLockCADPair(b.Client, b.scripts.cad, keys("trylockcad"))
	if err != nil {
		return nil, err
	}
	l, err := lockPair(b.Client, keys("lock"))
	if err != nil {
		return nil, err
	}
	return []harness.Pairer{
		lockpairs.Bare(nameBare, b.Client, b.scripts.cad, keys("bare")),
		seedPair(b.Client, b.scripts, keys("seed")),
		lockpairs.Redislock(nameRedislock, b.Client, keys("redislock")),
		lockpairs.Redsync(nameRedsync, b.Client, keys("redsync")),
		multiFencePair(b.Client, b.scripts.cad, keys("multi")),
		tc,
		l,
	}, nil
}

// newMutexes returns a lock.Mutex on each of keys, with leases of lockTTL.
func newMutexes(c *redis.Client, keys []string) ([]*lock.Mutex, error) {
	mutexes := make([]*lock.Mutex, len(keys))
	for i, key := range keys {
		var err error
		if mutexes[i], err = lock.New(c, lock.Config{Key: key, TTL: lockTTL}); err != nil {
			return nil, err
		}
	}
	return mutexes, nil
}

// setNXPX sends SET key token NX PX lockTTL and reports whether it set the
// key.
var setNXPX = lockpairs.SetNXPX

// multiFence takes key for token and reads the server's clock in one
// round trip: MULTI, SET key token NX GET PX lockTTL, TIME, EXEC. It
// returns the fence that clock makes, in µs, with no side key and no raise
// above a last fence; it fails when key is held.
func multiFence(ctx context.Context, c *redis.Client, key, token string) (int64, error) {
	var set *redis.Cmd
	var now *redis.TimeCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = p.Do(ctx, "set", key, token, "nx", "get", "px", ttlMillis)
		now = p.Time(ctx)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, err
	}
	// SET ... NX GET replies nil when the key was free, and set it.
	switch err := set.Err(); {
	case err == nil:
		return 0, fmt.Errorf("SET NX GET: %s is held", key)
	case !errors.Is(err, redis.Nil):
		return 0, err
	}
	t, err := now.Result()
	if err != nil {
		return 0, err
	}
	if t.UnixMicro() <= 0 {
		return 0, fmt.Errorf("TIME: no fence from %v", t)
	}
	return t.UnixMicro(), nil
}

// multiFencePair is the cheapest fenced pair: multiFence with a new random
// token, and the bare lock's compare-and-delete script by EVALSHA.
func multiFencePair(c *redis.Client, cadScript harness.Script, keys []string) harness.Pairer {
	tokens := make([]string, len(keys))
	return harness.Pairer{
		Name:     nameMultiFence,
		Commands: commandsFenced,
		Acquire: func(ctx context.Context, w int) (err error) {
			tokens[w] = rand.Text()
			_, err = multiFence(ctx, c, keys[w], tokens[w])
			return err
		},
		Release: func(ctx context.Context, w int) error {
			return cad(ctx, c, cadScript, keys[w], tokens[w])
		},
	}
}

// seedPair is the classic two scripts by EVALSHA, with a new random token
// for each lock.
func seedPair(c *redis.Client, s scripts, keys []string) harness.Pairer {
	tokens := make([]string, len(keys))
	return harness.Pairer{
		Name:     nameSeed,
		Commands: []string{"evalsha"},
		Acquire: func(ctx context.Context, w int) error {
			tokens[w] = rand.Text()
			n, err := c.EvalSha(ctx, s.seedLock.SHA, keys[w:w+1], ttlMillis, tokens[w]).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("classic lock: %s is held", keys[w])
			}
			return err
		},
		Release: func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, s.seedUnlock.SHA, keys[w:w+1], tokens[w]).Int64()
			if err == nil && n != 1 {
				err = errNotHeld
			}
			return err
		},
	}
}

// lockPair is the library: a Mutex per worker, TryLock then Unlock. Each
// lock obtained must carry a fence.
func lockPair(c *redis.Client, keys []string) (harness.Pairer, error) {
	mutexes, err := newMutexes(c, keys)
	if err != nil {
		return harness.Pairer{}, err
	}
	held := make([]*lock.Lock, len(keys))
	return harness.Pairer{
		Name:     nameLock,
		Commands: commandsFenced,
		Acquire: func(ctx context.Context, w int) (err error) {
			held[w], err = mutexes[w].TryLock(ctx)
			if err == nil && held[w].Fence() <= 0 {
				err = fmt.Errorf("TryLock: no fence on %s", keys[w])
			}
			return err
		},
		Release: func(ctx context.Context, w int) error {
			return held[w].Unlock(ctx)
		},
	}, nil
}

// tryLockCADPair is the lock's TryLock with the bare lock's unlock: a
// Mutex per worker, TryLock (MULTI, SET NX GET PX, TIME, EXEC), then the
// compare-and-delete script by EVALSHA on the lock's key and token. Beside
// the lock's own pair, it shows what unlock.lua costs over a bare
// compare-and-delete. Each lock obtained must carry a fence.
func tryLockCADPair(c *redis.Client, cadScript harness.Script, keys []string) (harness.Pairer, error) {
	mutexes, err := newMutexes(c, keys)
	if err != nil {
		return harness.Pairer{}, err
	}
	tokens := make([]string, len(keys))
	return harness.Pairer{
		Name:     nameTryLockCAD,
		Commands: commandsFenced,
		Acquire: func(ctx context.Context, w int) error {
			l, err := mutexes[w].TryLock(ctx)
			if err != nil {
				return err
			}
			if l.Fence() <= 0 {
				return fmt.Errorf("TryLock: no fence on %s", keys[w])
			}
			tokens[w] = l.Token()
			return nil
		},
		Release: func(ctx context.Context, w int) error {
			return cad(ctx, c, cadScript, keys[w], tokens[w])
		},
	}, nil
}
