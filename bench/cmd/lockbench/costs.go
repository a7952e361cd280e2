package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Names of the calls in the Redis time per call.
const (
	callBareSet    = "bare SET NX PX"
	callBareCAD    = "bare compare-and-delete script"
	callSeedLock   = "classic lock script"
	callSeedUnlock = "classic unlock script"
	callTryLock    = "lock TryLock: MULTI, SET NX GET PX, TIME, EXEC"
	callUnlock     = "lock Unlock: unlock script"

	// The bounds' calls (see nameMultiFence and nameTryLockCAD).
	callMultiFence = "fence by MULTI: MULTI, SET NX GET PX, TIME, EXEC"
	callMultiCAD   = "compare-and-delete script, after fence by MULTI"
	callTryLockCAD = "lock TryLock, freed by the compare-and-delete"
	callLockCAD    = "compare-and-delete script, after TryLock"
)

// A callCost is the server time of one kind of call, run alone in its
// phase.
type callCost struct {
	call string
	load string
	// commands are the call's top-level commands, as INFO commandstats
	// names them, each sent once per call: a command or a script alone,
	// or MULTI and EXEC, whose time includes that of the commands queued.
	commands []string
	harness.Phase
}

// calls returns the number of calls in the phase.
func (c callCost) calls() int64 {
	return c.Server[c.commands[len(c.commands)-1]].Calls
}

// usecPerCall returns the server time of one call's top-level commands,
// in µs.
func (c callCost) usecPerCall() float64 {
	return harness.Ratio(c.Server.Usec(c.commands...), c.calls())
}

// innerUsecPerCall returns the time of the commands a script or an EXEC
// ran, per call, in µs: part of usecPerCall.
func (c callCost) innerUsecPerCall() float64 {
	return harness.Ratio(c.Server.NestedUsec(c.commands...), c.calls())
}

// inner lists the commands a script or an EXEC ran per call, as "get,
// set×2, time".
func (c callCost) inner() string {
	return c.Server.Nested(c.calls(), c.commands...)
}

// keysPerWorker is how many locks a phase of a call alone takes per
// worker, on keys that every round uses again.
const keysPerWorker = 64

// A kind is one way of locking whose calls callCosts measures: obtain
// takes the free key keys[i] and returns the unlock of what it took.
type kind struct {
	tag          string   // in the keys' names
	take, give   string   // the calls' names
	takeCommands []string // the take's top-level commands; every give is a script, by EVALSHA
	obtain       func(ctx context.Context, i int) (unlock func(context.Context) error, err error)
}

// callCosts measures each call in phases of its own, since INFO
// commandstats sums every script under evalsha. In each round, each kind's
// lock takes up to keysPerWorker free keys per worker, one after another,
// in a phase bounded by -duration, and its unlock then frees the same keys
// in the same order. Every round uses the same keys again, as the pair
// phases do, so that the keyspace neither grows nor shrinks under the
// load; the kinds take turns, round after round, until each has locked
// for -duration or -max-ops locks.
func (b *bench) callCosts(ctx context.Context) ([]callCost, error) {
	c := b.Client
	n := b.Workers * keysPerWorker
	keys := func(tag string) []string {
		k := make([]string, n)
		for i := range k {
			k[i] = b.Key(fmt.Sprintf("alone:%s:%d", tag, i))
		}
		return k
	}
	bareKeys, seedKeys, multiKeys, tryLockCADKeys := keys("bare"), keys("seed"), keys("multi"), keys("trylockcad")
	tryLockCADMutexes, err := newMutexes(c, tryLockCADKeys)
	if err != nil {
		return nil, err
	}
	mutexes, err := newMutexes(c, keys("lock"))
	if err != nil {
		return nil, err
	}
	kinds := []kind{{
		tag: "bare", take: callBareSet, give: callBareCAD, takeCommands: []string{"set"},
		obtain: func(ctx context.Context, i int) (func(context.Context) error, error) {
			key, token := bareKeys[i], rand.Text()
			ok, err := setNXPX(ctx, c, key, token)
			if err == nil && !ok {
				err = fmt.Errorf("SET NX: %s is held", key)
			}
			return func(ctx context.Context) error { return cad(ctx, c, b.scripts.cad, key, token) }, err
		},
	}, {
		tag: "seed", take: callSeedLock, give: callSeedUnlock, takeCommands: []string{"evalsha"},
		obtain: func(ctx context.Context, i int) (func(context.Context) error, error) {
			key, token := seedKeys[i:i+1], rand.Text()
			n, err := c.EvalSha(ctx, b.scripts.seedLock.SHA, key, ttlMillis, token).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("classic lock: %s is held", key[0])
			}
			return func(ctx context.Context) error { return cad(ctx, c, b.scripts.seedUnlock, key[0], token) }, err
		},
	}, {
		tag: "multi", take: callMultiFence, give: callMultiCAD, takeCommands: commandsTryLock,
		obtain: func(ctx context.Context, i int) (func(context.Context) error, error) {
			key, token := multiKeys[i], rand.Text()
			_, err := multiFence(ctx, c, key, token)
			return func(ctx context.Context) error { return cad(ctx, c, b.scripts.cad, key, token) }, err
		},
	}, {
		tag: "trylockcad", take: callTryLockCAD, give: callLockCAD, takeCommands: commandsTryLock,
		obtain: func(ctx context.Context, i int) (func(context.Context) error, error) {
			l, err := tryLockCADMutexes[i].TryLock(ctx)
			return func(ctx context.Context) error { return cad(ctx, c, b.scripts.cad, tryLockCADKeys[i], l.Token()) }, err
		},
	}, {
		tag: "lock", take: callTryLock, give: callUnlock, takeCommands: commandsTryLock,
		obtain: func(ctx context.Context, i int) (func(context.Context) error, error) {
			l, err := mutexes[i].TryLock(ctx)
			return l.Unlock, err
		},
	}}

	take := make([]callCost, len(kinds))
	give := make([]callCost, len(kinds))
	for i, k := range kinds {
		take[i] = callCost{call: k.take, load: "a free key", commands: k.takeCommands}
		give[i] = callCost{call: k.give, load: "the lock just taken, no waiter", commands: []string{"evalsha"}}
	}
	for more := true; more; {
		more = false
		for i, k := range kinds {
			if take[i].Elapsed >= b.Duration || take[i].Ops >= b.MaxOps {
				continue
			}
			more = true
			unlocks := make([]func(context.Context) error, n)
			var next atomic.Int64
			bounds := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: min(int64(n), b.MaxOps-take[i].Ops)}
			ph, err := b.MeasureDrive(ctx, bounds, func(ctx context.Context, w int) error {
				j := next.Add(1) - 1
				unlock, err := k.obtain(ctx, int(j))
				unlocks[j] = unlock
				return err
			})
			if err == nil {
				err = ph.CheckCommands(take[i].commands)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.take, err)
			}
			take[i].Phase = take[i].Phase.Add(ph)

			// The unlocks undo exactly the locks before them: as many as
			// there were, in at most ten times the locks' time.
			next.Store(0)
			bounds = harness.Bounds{Workers: b.Workers, Duration: 10 * b.Duration, MaxOps: ph.Ops}
			ph, err = b.MeasureDrive(ctx, bounds, func(ctx context.Context, w int) error {
				return unlocks[next.Add(1)-1](ctx)
			})
			if err == nil {
				err = ph.CheckCommands(give[i].commands)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.give, err)
			}
			give[i].Phase = give[i].Phase.Add(ph)
		}
	}
	var costs []callCost
	for i := range kinds {
		costs = append(costs, take[i], give[i])
	}
	return costs, nil
}

// cad runs a compare-and-delete script by EVALSHA on key, and fails unless
// it deleted the key.
func cad(ctx context.Context, c *redis.Client, s harness.Script, key, token string) error {
	n, err := c.EvalSha(ctx, s.SHA, []string{key}, token).Int64()
	if err == nil && n != 1 {
		err = errNotHeld
	}
	return err
}
