// Package lockpairs holds the lock pairs that more than one benchmark
// command runs beside the library's lock: a bare SET NX PX with the
// compare-and-delete script, bsm/redislock and go-redsync/redsync, each a
// harness.Pairer whose worker w takes and gives back the lock at keys[w].
// Only the commands that measure locks import it, so that the peers'
// packages reach no other command's build.
package lockpairs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// TTL is every pair's lease time: long enough that no lock lapses in a
// run.
const TTL = 30 * time.Second

// TTLMillis is TTL as the scripts take it.
var TTLMillis = strconv.FormatInt(TTL.Milliseconds(), 10)

// Paths of the peer modules, whose versions a report names.
const (
	ModRedislock = "github.com/bsm/redislock"
	ModRedsync   = "github.com/go-redsync/redsync/v4"
)

// ErrNotHeld is returned by a release that found the lock not held.
var ErrNotHeld = errors.New("the unlock found the lock not held")

// SetNXPX sends SET key token NX PX TTL and reports whether it set the
// key.
func SetNXPX(ctx context.Context, c *redis.Client, key, token string) (bool, error) {
	err := c.Do(ctx, "set", key, token, "nx", "px", TTLMillis).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Bare is the bare lock, named name: SET key token NX PX with a new random
// token, then the compare-and-delete script cad by EVALSHA.
func Bare(name string, c *redis.Client, cad harness.Script, keys []string) harness.Pairer {
	tokens := make([]string, len(keys))
	return harness.Pairer{
		Name:     name,
		Commands: []string{"set", "evalsha"},
		Acquire: func(ctx context.Context, w int) error {
			tokens[w] = rand.Text()
			ok, err := SetNXPX(ctx, c, keys[w], tokens[w])
			if err == nil && !ok {
				err = fmt.Errorf("SET NX: %s is held", keys[w])
			}
			return err
		},
		Release: func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, cad.SHA, keys[w:w+1], tokens[w]).Int64()
			if err == nil && n != 1 {
				err = ErrNotHeld
			}
			return err
		},
	}
}

// Redislock is bsm/redislock, named name: Obtain with no retry, then
// Release.
func Redislock(name string, c *redis.Client, keys []string) harness.Pairer {
	client := redislock.New(c)
	opts := &redislock.Options{RetryStrategy: redislock.NoRetry()}
	held := make([]*redislock.Lock, len(keys))
	return harness.Pairer{
		Name:     name,
		Commands: []string{"evalsha"},
		Acquire: func(ctx context.Context, w int) (err error) {
			held[w], err = client.Obtain(ctx, keys[w], TTL, opts)
			return err
		},
		Release: func(ctx context.Context, w int) error {
			return held[w].Release(ctx)
		},
	}
}

// Redsync is go-redsync/redsync on its go-redis v9 pool of the one
// client, named name: a Mutex per worker, with one try, TryLockContext
// then UnlockContext.
func Redsync(name string, c *redis.Client, keys []string) harness.Pairer {
	rs := redsync.New(goredis.NewPool(c))
	mutexes := make([]*redsync.Mutex, len(keys))
	for w, key := range keys {
		mutexes[w] = rs.NewMutex(key, redsync.WithExpiry(TTL), redsync.WithTries(1))
	}
	return harness.Pairer{
		Name:     name,
		Commands: []string{"set", "evalsha"},
		Acquire: func(ctx context.Context, w int) error {
			return mutexes[w].TryLockContext(ctx)
		},
		Release: func(ctx context.Context, w int) error {
			ok, err := mutexes[w].UnlockContext(ctx)
			if err == nil && !ok {
				err = ErrNotHeld
			}
			return err
		},
	}
}
