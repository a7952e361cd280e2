package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// An allocRow is the heap allocations of one variant's call, in this
// process, and the variant it is compared with.
type allocRow struct {
	name    string
	allocs  float64
	against string // the variant it is compared with; may be empty
}

// against names the variant each is compared with: the library's Allow
// with the bare EVALSHA of its script.
var against = map[string]string{nameWindow: nameBareWindow, nameGCRA: nameBareGCRA}

// allocations measures the allocations per call of each variant, on the
// same warmed client, each call on a key of its own, as the first call on
// a key is in the load.
func (b *bench) allocations(ctx context.Context) ([]allocRow, error) {
	runs := b.allocRuns
	var rows []allocRow
	for _, v := range b.variants {
		keys := make([]string, runs+1) // AllocsPerRun calls once more, to warm up
		for i := range keys {
			keys[i] = fmt.Sprintf("%s:allocs:%d", v.prefix, i)
		}
		var first error
		i := 0
		allocs := testing.AllocsPerRun(runs, func() {
			ok, err := v.allow(ctx, keys[i])
			if err == nil && !ok {
				err = fmt.Errorf("refused on a new key %s", keys[i])
			}
			if first == nil {
				first = err
			}
			i++
		})
		if first != nil {
			return nil, fmt.Errorf("%s: %w", v.name, first)
		}
		rows = append(rows, allocRow{name: v.name, allocs: allocs, against: against[v.name]})
	}
	return rows, nil
}

// alloc returns the allocations per call of the named variant, or 0.
func (r results) alloc(name string) float64 {
	for _, a := range r.allocs {
		if a.name == name {
			return a.allocs
		}
	}
	return 0
}

// allocRatio returns a row's allocations over those of the variant it is
// compared with, or "" for a row compared with none.
func (r results) allocRatio(a allocRow) string {
	if a.against == "" {
		return ""
	}
	return harness.Times(harness.Div(a.allocs, r.alloc(a.against)))
}
