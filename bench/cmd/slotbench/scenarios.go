package main

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Shapes of the scenarios that no flag changes.
const (
	highLimit  = 1000 // a limit no-contention load never reaches
	areaLimit  = 60   // the external system's limit in the classic script
	batchSize  = 100
	leaseTTL   = time.Minute
	holderForm = "dev-%011d" // a 15-byte device ID; one of digits only would be stored as an integer
)

func (b *bench) limiter(key string, limit int64, ttl time.Duration) *slotlimit.Limiter {
	return newLimiter(b.Client, b.Key(key), limit, ttl)
}

// newLimiter returns a Limiter on client, for a Config that is valid.
func newLimiter(client redis.UniversalClient, key string, limit int64, ttl time.Duration) *slotlimit.Limiter {
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: ttl})
	if err != nil {
		panic(err) // every Config here is valid
	}
	return l
}

func ids(format string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf(format, i)
	}
	return s
}

// noContention is scenario 1: TryAcquire+Release pairs of distinct
// holders on one key whose limit is never reached, and the baselines.
func (b *bench) noContention(ctx context.Context) ([]harness.PairResult, error) {
	holders := ids("worker-%d", b.Workers)
	cfg := slotlimit.Config{Key: b.Key("pairs"), Limit: highLimit, TTL: leaseTTL}
	l := b.limiter("pairs", highLimit, leaseTTL)
	acquire, release, err := b.capture(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return b.RunPairs(ctx, []harness.Pairer{
		incrDecr(b.Client, b.Key("incr")),
		seedPair(b.Client, b.scripts, b.Key("seed"), highLimit),
		rawLease(b.Client, acquire, release, holders),
		limiterPair(l, holders),
	}, b.Workers)
}

// A contended phase is scenario 2 in one mode, with one hold.
type contended struct {
	mode      string
	wait      bool
	hold      time.Duration
	acquires  int64
	tries     int64   // acquire-script calls the load client sent
	held      float64 // mean slots held as Redis counts them, over the limit
	inSection float64 // mean slots spent in the guarded section (the holds), over the limit
	harness.Phase
}

// contention is scenario 2: -contenders workers on one key of limit 60,
// each holding its slot for hold. A poller calls TryAcquire again at once
// after a refusal; a waiter calls Acquire.
func (b *bench) contention(ctx context.Context, hold time.Duration, wait bool) (contended, error) {
	mode := "polling TryAcquire"
	key := fmt.Sprintf("contended:%v:poll", hold)
	if wait {
		mode, key = "Acquire (waits, hand-off)", fmt.Sprintf("contended:%v:wait", hold)
	}
	l := b.limiter(key, areaLimit, leaseTTL)
	holders := ids("worker-%d", b.contenders)
	var acquires, busy atomic.Int64
	tries := b.Hook.Watch(b.scripts.acquire.SHA)
	tries0 := tries.Load()
	sampling, stopSampling := context.WithCancel(ctx)
	held := sampleHeld(sampling, b.Admin, b.Key(key))
	ph, err := b.Measure(ctx, func() (int64, error) {
		return harness.Drive(ctx, b.Bounds(b.contenders), func(ctx context.Context, w int) error {
			var res slotlimit.Result
			var err error
			if wait {
				res, err = l.Acquire(ctx, holders[w])
			} else {
				res, err = l.TryAcquire(ctx, holders[w])
			}
			if err != nil || !res.Acquired {
				return err
			}
			got := time.Now()
			time.Sleep(hold)
			busy.Add(int64(time.Since(got)))
			release, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			if err := notHeldIsNil(l.Release(release, holders[w])); err != nil {
				return err
			}
			acquires.Add(1)
			return nil
		})
	})
	stopSampling()
	mean := <-held
	if err != nil {
		return contended{}, fmt.Errorf("%s: %w", mode, err)
	}
	return contended{
		mode:      mode,
		wait:      wait,
		hold:      hold,
		acquires:  acquires.Load(),
		tries:     tries.Load() - tries0,
		held:      mean / areaLimit,
		inSection: float64(busy.Load()) / float64(ph.Elapsed) / areaLimit,
		Phase:     ph,
	}, nil
}

// sampleHeld reads the live leases at key about every millisecond until
// ctx ends, then sends their mean. It reads them with ZCOUNT, as Count does
// when no lease weighs more than one unit, so that its reads are told
// apart from the load's in INFO commandstats (see harness.OwnCommands).
func sampleHeld(ctx context.Context, admin *redis.Client, key string) <-chan float64 {
	mean := make(chan float64, 1)
	go func() {
		var sum, n int64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				mean <- float64(sum) / float64(max(n, 1))
				return
			case <-tick.C:
			}
			now := "(" + strconv.FormatInt(time.Now().UnixMilli(), 10)
			if held, err := admin.ZCount(ctx, key, now, "+inf").Result(); err == nil {
				sum += held
				n++
			}
		}
	}()
	return mean
}
