package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// memory holds MEMORY USAGE figures, in bytes, summed over a Limiter's
// keys.
type memory struct {
	keys      int           // the keys a Limiter may use
	full      int64         // 60 holders, after a refused try
	encoding  string        // of the lease set at 60 holders
	counter   int64         // the classic counter at 60
	released  int64         // after all 60 released
	lapsedAt  int64         // all 60 leases taken, just before they lapse
	lapsed    int64         // after all 60 leases lapsed, none released
	reclaimed time.Duration // from the lapse until lapsed was read
}

// reclaimWithin bounds the wait for Redis to free a lapsed key.
const reclaimWithin = 5 * time.Second

func (b *bench) memory(ctx context.Context) (memory, error) {
	var m memory
	key := b.Key("mem:ar:0571")
	acquire, _, err := b.capture(ctx, slotlimit.Config{Key: key, Limit: areaLimit})
	if err != nil {
		return m, err
	}
	keys := acquire.Keys
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
	if m.full, err = harness.MemoryUsage(ctx, b.Admin, keys...); err != nil {
		return m, err
	}
	if m.encoding, err = b.Admin.ObjectEncoding(ctx, key).Result(); err != nil {
		return m, err
	}
	if _, err := l.ReleaseBatch(ctx, holders); err != nil {
		return m, err
	}
	if m.released, err = harness.MemoryUsage(ctx, b.Admin, keys...); err != nil {
		return m, err
	}

	// A lapsed key is not read again, as an idle area code is not: only
	// Redis's own expiry may free it.
	const short = 100 * time.Millisecond
	lapse := time.Now().Add(short) // no later than the leases lapse
	if err := fill(b.limiter("mem:ar:0571", areaLimit, short)); err != nil {
		return m, err
	}
	if m.lapsedAt, err = harness.MemoryUsage(ctx, b.Admin, keys...); err != nil {
		return m, err
	}
	m.lapsed = m.lapsedAt
	for m.lapsed > 0 && time.Since(lapse) < reclaimWithin {
		time.Sleep(10 * time.Millisecond)
		if m.lapsed, err = harness.MemoryUsage(ctx, b.Admin, keys...); err != nil {
			return m, err
		}
	}
	m.reclaimed = max(time.Since(lapse), 0)
	m.keys = len(keys)

	counter := b.Key("mem:counter")
	for range areaLimit {
		if err := b.Client.EvalSha(ctx, b.scripts.seedAcquire.SHA, []string{counter}, areaLimit).Err(); err != nil {
			return m, err
		}
	}
	m.counter, err = harness.MemoryUsage(ctx, b.Admin, counter)
	return m, err
}
