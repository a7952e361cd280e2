package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit"
)

// A manyKeys result is scenario 3: one TryAcquire+Release on each of -keys
// area codes.
type manyKeys struct {
	keys  int64 // asked for
	left  int64 // keys of the area codes still in Redis afterwards
	lease pairResult
}

func (b *bench) manyKeys(ctx context.Context) (manyKeys, error) {
	r := pairResult{name: nameLimiter, commands: []string{"evalsha"},
		acquire: newTimings(b.workers), release: newTimings(b.workers)}
	holders := ids(holderForm, b.workers)
	var next atomic.Int64
	ph, err := b.measure(ctx, func() (int64, error) {
		return drive(ctx, b.workers, 15*b.duration, int64(b.keys), func(ctx context.Context, w int) error {
			l := b.limiter(fmt.Sprintf("ar:%06d", next.Add(1)-1), areaLimit, leaseTTL)
			t0 := time.Now()
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = errors.New("refused on an empty key")
			}
			if err != nil {
				return err
			}
			t1 := time.Now()
			if _, err := l.Release(ctx, holders[w]); err != nil {
				return err
			}
			r.acquire.add(w, t1.Sub(t0))
			r.release.add(w, time.Since(t1))
			return nil
		})
	})
	if err != nil {
		return manyKeys{}, fmt.Errorf("many keys: %w", err)
	}
	r.phase = ph
	left, err := countKeys(ctx, b.admin, "*"+b.prefix+"ar:*")
	if err != nil {
		return manyKeys{}, err
	}
	return manyKeys{keys: int64(b.keys), left: left, lease: r}, nil
}

// memory holds MEMORY USAGE figures, in bytes, summed over a Limiter's
// five keys.
type memory struct {
	keys      int           // the keys a Limiter may use
	full      int64         // 60 holders, after a refused try
	encoding  string        // of the lease set at 60 holders
	counter   int64         // the seed's counter at 60
	released  int64         // after all 60 released
	lapsedAt  int64         // all 60 leases taken, just before they lapse
	lapsed    int64         // after all 60 leases lapsed, none released
	reclaimed time.Duration // from the lapse until lapsed was read
}

// reclaimWithin bounds the wait for Redis to free a lapsed key.
const reclaimWithin = 5 * time.Second

func (b *bench) memory(ctx context.Context) (memory, error) {
	var m memory
	key := b.prefix + "mem:ar:0571"
	acquire, _, err := b.capture(ctx, slotlimit.Config{Key: key, Limit: areaLimit})
	if err != nil {
		return m, err
	}
	keys := acquire.keys
	holders := ids(holderForm, areaLimit)
	fill := func(l *slotlimit.Limiter) error {
		results, err := l.TryAcquireBatch(ctx, holders)
		for _, res := range results {
			if !res.Acquired {
				return errors.New("memory: a slot was refused")
			}
		}
		return err
	}
	l := b.limiter("mem:ar:0571", areaLimit, slotlimit.DefaultTTL)
	if err := fill(l); err != nil {
		return m, err
	}
	// A full key under load has been refused a slot.
	if res, err := l.TryAcquire(ctx, "refused"); err != nil || res.Acquired {
		return m, fmt.Errorf("memory: a 61st holder: %v, %+v", err, res)
	}
	if m.full, err = memoryUsage(ctx, b.admin, keys...); err != nil {
		return m, err
	}
	if m.encoding, err = b.admin.ObjectEncoding(ctx, key).Result(); err != nil {
		return m, err
	}
	if _, err := l.ReleaseBatch(ctx, holders); err != nil {
		return m, err
	}
	if m.released, err = memoryUsage(ctx, b.admin, keys...); err != nil {
		return m, err
	}

	// A lapsed key is not read again, as an idle area code is not: only
	// Redis's own expiry may free it.
	const short = 100 * time.Millisecond
	lapse := time.Now().Add(short) // no later than the leases lapse
	if err := fill(b.limiter("mem:ar:0571", areaLimit, short)); err != nil {
		return m, err
	}
	if m.lapsedAt, err = memoryUsage(ctx, b.admin, keys...); err != nil {
		return m, err
	}
	m.lapsed = m.lapsedAt
	for m.lapsed > 0 && time.Since(lapse) < reclaimWithin {
		time.Sleep(10 * time.Millisecond)
		if m.lapsed, err = memoryUsage(ctx, b.admin, keys...); err != nil {
			return m, err
		}
	}
	m.reclaimed = max(time.Since(lapse), 0)
	m.keys = len(keys)

	counter := b.prefix + "mem:counter"
	for range areaLimit {
		if err := b.client.EvalSha(ctx, b.scripts.seedAcquire.sha, []string{counter}, areaLimit).Err(); err != nil {
			return m, err
		}
	}
	m.counter, err = memoryUsage(ctx, b.admin, counter)
	return m, err
}
