package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/lock"
)

// Calls whose allocations the report compares.
const (
	allocSetNX   = "go-redis SetNX"
	allocTryLock = "Mutex.TryLock"
	allocCAD     = "go-redis EvalSha, compare-and-delete script, reply as int64"
	allocUnlock  = "Lock.Unlock"
)

// An allocRow is the heap allocations of one call, in this process, and
// the call it is compared with.
type allocRow struct {
	call    string
	allocs  float64
	against string // the call in the same table it is compared with; may be empty
	label   string // names against in the report
}

// allocations measures the allocations per call of TryLock and Unlock and
// of the go-redis calls a bare lock makes, on the same warmed client, each
// call on a key of its own so that every lock is obtained; then of each
// variant's pair, on worker 0's keys.
func (b *bench) allocations(ctx context.Context) ([]allocRow, error) {
	runs := b.allocRuns
	keys := make([]string, runs+1) // AllocsPerRun calls once more, to warm up
	mutexes := make([]*lock.Mutex, len(keys))
	for i := range keys {
		keys[i] = b.Key(fmt.Sprintf("allocs:%d", i))
		var err error
		if mutexes[i], err = lock.New(b.Client, lock.Config{Key: keys[i], TTL: lockTTL}); err != nil {
			return nil, err
		}
	}
	held := make([]*lock.Lock, len(keys))
	token := rand.Text()

	var first error
	check := func(err error) {
		if first == nil && err != nil {
			first = err
		}
	}
	c := b.Client
	var rows []allocRow
	// each measures call(i) for i = 0, 1, 2, ...: every call on keys[i].
	each := func(name, against, label string, call func(i int)) {
		i := 0
		allocs := testing.AllocsPerRun(runs, func() {
			call(i)
			i++
		})
		rows = append(rows, allocRow{call: name, allocs: allocs, against: against, label: label})
	}
	each(allocSetNX, "", "", func(i int) {
		ok, err := c.SetNX(ctx, keys[i], token, lockTTL).Result()
		if err == nil && !ok {
			err = errors.New("SetNX: the key is held")
		}
		check(err)
	})
	each(allocCAD, "", "", func(i int) {
		check(cad(ctx, c, b.scripts.cad, keys[i], token))
	})
	each(allocTryLock, allocSetNX, "go-redis SetNX", func(i int) {
		var err error
		held[i], err = mutexes[i].TryLock(ctx)
		check(err)
	})
	each(allocUnlock, allocCAD, "the go-redis compare-and-delete", func(i int) {
		check(held[i].Unlock(ctx))
	})
	for _, p := range b.pairers {
		row := allocRow{call: p.Name + ", the pair", allocs: testing.AllocsPerRun(runs, func() {
			check(p.Acquire(ctx, 0))
			check(p.Release(ctx, 0))
		})}
		if p.Name != nameBare {
			row.against, row.label = nameBare+", the pair", "the bare pair"
		}
		rows = append(rows, row)
	}
	return rows, first
}

// alloc returns the allocations per call of the named call, or 0.
func (r results) alloc(call string) float64 {
	for _, a := range r.allocs {
		if a.call == call {
			return a.allocs
		}
	}
	return 0
}

// allocRatio returns a row's allocations over those of the call it is
// compared with, or "" for a row compared with none.
func (r results) allocRatio(a allocRow) string {
	if a.against == "" {
		return ""
	}
	return harness.Times(harness.Div(a.allocs, r.alloc(a.against)))
}
