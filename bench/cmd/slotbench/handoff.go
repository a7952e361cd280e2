package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Shapes of the hand-off phase.
const (
	handoffWarmup = 3               // rounds run first and not recorded, while the waiter's client subscribes
	pingsPerRound = 3               // PING round trips timed in each Acquire round, while the waiter is queued
	queuedWithin  = time.Second     // bounds the wait for the waiter's first try to come back
	handedWithin  = 5 * time.Second // bounds the wait for the waiter after the release
	pollTries     = 1_000_000       // bounds a polling waiter's tries in one round
	handoffTime   = 10              // a mode's rounds take at most this many times -duration
	handoffHolder = "dev-holder-000"
	handoffWaiter = "dev-waiter-000"
)

// The ways a waiter waits in the hand-off phase.
const (
	waitAcquire = "Acquire (notice, then claim)"
	waitPolling = "polling TryAcquire"
)

// A handoffMode is the hand-off latency of one way of waiting.
type handoffMode struct {
	mode   string
	rounds int
	gap    harness.Timings // from Release returning to the waiter's acquire returning; may be negative
	sent   int64           // commands the waiter's client sent in the recorded rounds, its release included
}

// handoffs is the hand-off phase: both ways of waiting, and PING round
// trips on the load client measured in the same rounds.
type handoffs struct {
	wait, poll handoffMode
	ping       harness.Timings
}

// handoff measures, on an otherwise idle server, how long after a
// holder's Release returns a waiter's acquire returns with the slot. One
// holder on the load client holds the only slot of a key of limit 1; a
// waiter on a client of its own starts to wait, and once its first try has
// come back refused (so that it is queued), the holder releases. Each mode
// runs at most -handoffs rounds and at most 10 times -duration.
func (b *bench) handoff(ctx context.Context) (handoffs, error) {
	h := handoffs{ping: harness.NewTimings(1)}
	waiterClient, waiterHook := b.NewClient(4)
	var err error
	h.wait, err = b.handoffRounds(ctx, waitAcquire, "handoff:wait", waiterClient, waiterHook, &h.ping)
	if err != nil {
		return h, err
	}
	h.poll, err = b.handoffRounds(ctx, waitPolling, "handoff:poll", waiterClient, waiterHook, nil)
	return h, err
}

// handoffRounds runs the rounds of one mode on key. ping, when not nil, gets
// pingsPerRound PING round trips of each recorded round, timed while the
// waiter is queued.
func (b *bench) handoffRounds(ctx context.Context, mode, key string, waiterClient *redis.Client, waiterHook *harness.CommandCounter, ping *harness.Timings) (handoffMode, error) {
	m := handoffMode{mode: mode, gap: harness.NewTimings(1)}
	holder := newLimiter(b.Client, b.Key(key), 1, leaseTTL)
	waiter := newLimiter(waiterClient, b.Key(key), 1, leaseTTL)
	acquire := func(ctx context.Context) (slotlimit.Result, error) {
		if mode == waitAcquire {
			return waiter.Acquire(ctx, handoffWaiter)
		}
		for range pollTries {
			res, err := waiter.TryAcquire(ctx, handoffWaiter)
			if err != nil || res.Acquired {
				return res, err
			}
		}
		return slotlimit.Result{}, errors.New("the polling waiter got no slot")
	}

	type got struct {
		at  time.Time
		res slotlimit.Result
		err error
	}
	round := func(ctx context.Context, i int) error {
		record := i >= handoffWarmup
		if res, err := holder.TryAcquire(ctx, handoffHolder); err != nil || !res.Acquired {
			return fmt.Errorf("the holder got no slot: %v, %+v", err, res)
		}
		done, sent := waiterHook.Done(), waiterHook.Sent()
		waitCtx, cancel := context.WithTimeout(ctx, queuedWithin+handedWithin)
		defer cancel()
		ch := make(chan got, 1)
		go func() {
			res, err := acquire(waitCtx)
			ch <- got{time.Now(), res, err}
		}()
		// The waiter's first try has come back refused: it is queued.
		for deadline := time.Now().Add(queuedWithin); waiterHook.Done() == done; {
			if time.Now().After(deadline) {
				return errors.New("the waiter's first try did not come back")
			}
			time.Sleep(20 * time.Microsecond)
		}
		if ping != nil && record {
			for range pingsPerRound {
				t0 := time.Now()
				if err := b.Client.Ping(ctx).Err(); err != nil {
					return err
				}
				ping.Add(0, time.Since(t0))
			}
		}
		if err := holder.Release(ctx, handoffHolder); err != nil {
			return fmt.Errorf("the holder's release: %w", err)
		}
		released := time.Now()
		g := <-ch
		if g.err != nil || !g.res.Acquired {
			return fmt.Errorf("the waiter: %v, %+v", g.err, g.res)
		}
		if err := waiter.Release(ctx, handoffWaiter); err != nil {
			return fmt.Errorf("the waiter's release: %w", err)
		}
		if record {
			m.gap.Add(0, g.at.Sub(released))
			m.sent += waiterHook.Sent() - sent
			m.rounds++
		}
		return nil
	}
	_, err := harness.Rounds(ctx, b.handoffs+handoffWarmup, handoffTime*b.Duration, round)
	if err != nil {
		return m, fmt.Errorf("%s: %w", mode, err)
	}
	return m, nil
}
