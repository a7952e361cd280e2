package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/slotlimit/slotlimit"
)

// allocRuns is how many calls testing.AllocsPerRun averages over.
const allocRuns = 1000

// Calls whose allocations the allocation target compares.
const (
	allocEvalSha    = "go-redis EvalSha, library acquire script, reply as []int64"
	allocTryAcquire = "Limiter.TryAcquire"
)

// An allocRow is the heap allocations of one call, in this process.
type allocRow struct {
	call   string
	allocs float64
}

// allocations measures the allocations per call of the library's calls and of
// the bare go-redis calls they make, on the same warmed client. Each bare
// call reads its reply as the library does. Acquires renew one holder's
// lease, so every call takes the same path.
func (b *bench) allocations(ctx context.Context) ([]allocRow, error) {
	cfg := slotlimit.Config{Key: b.Key("allocs"), Limit: highLimit, TTL: leaseTTL}
	l := b.limiter("allocs", highLimit, leaseTTL)
	acquire, release, err := b.capture(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a, r := acquire.Argv, release.Argv
	holder := "worker-0"
	limit := strconv.FormatInt(cfg.Limit, 10)
	counter := []string{b.Key("allocs:seed")}
	holders := ids(holderForm, batchSize)

	// A lease first, so that every acquire below renews it: a new lease
	// comes back as one number, not a list (see scripts/acquire.lua).
	if _, err := l.TryAcquire(ctx, holder); err != nil {
		return nil, err
	}
	var first error
	check := func(err error) {
		if first == nil {
			first = err
		}
	}
	c := b.Client
	rows := []allocRow{
		{allocEvalSha, testing.AllocsPerRun(allocRuns, func() {
			_, err := c.EvalSha(ctx, acquire.SHA, acquire.Keys, a[0], a[1], a[2], holder).Int64Slice()
			check(err)
		})},
		{allocTryAcquire, testing.AllocsPerRun(allocRuns, func() {
			_, err := l.TryAcquire(ctx, holder)
			check(err)
		})},
		{"go-redis EvalSha, library release script, reply as text", testing.AllocsPerRun(allocRuns, func() {
			_, err := c.EvalSha(ctx, release.SHA, release.Keys, r[0], r[1], holder).Text()
			check(err)
		})},
		{"Limiter.Release", testing.AllocsPerRun(allocRuns, func() {
			check(notHeldIsNil(l.Release(ctx, holder)))
		})},
		{"go-redis EvalSha, classic acquire script", testing.AllocsPerRun(allocRuns, func() {
			check(c.EvalSha(ctx, b.scripts.seedAcquire.SHA, counter, limit).Err())
		})},
		{"go-redis INCR", testing.AllocsPerRun(allocRuns, func() {
			check(c.Incr(ctx, counter[0]).Err())
		})},
		{"Limiter.TryAcquireBatch of 100, per holder", testing.AllocsPerRun(allocRuns/10, func() {
			_, err := l.TryAcquireBatch(ctx, holders)
			check(err)
		}) / batchSize},
	}
	if _, err := l.ReleaseBatch(ctx, append(holders, holder)); err != nil {
		check(err)
	}
	return rows, first
}
