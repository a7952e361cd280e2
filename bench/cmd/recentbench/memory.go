package main

import (
	"context"
	"fmt"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// A memoryRow is the MEMORY USAGE of one variant's lists, each full.
type memoryRow struct {
	name     string
	lists    int
	bytes    int64  // summed over the lists
	encoding string // of its first list
}

// perList returns the mean bytes per list.
func (m memoryRow) perList() float64 {
	return harness.Ratio(m.bytes, int64(m.lists))
}

// measureMemory reads MEMORY USAGE (SAMPLES 0) of every list of every
// variant, just filled: each holds the same max values as the same list
// of every other variant.
func (b *bench) measureMemory(ctx context.Context) ([]memoryRow, error) {
	var rows []memoryRow
	for _, v := range b.variants {
		keys := v.allKeys()
		n, err := harness.MemoryUsage(ctx, b.Admin, keys...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		enc, err := b.Admin.ObjectEncoding(ctx, keys[0]).Result()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		rows = append(rows, memoryRow{name: v.name, lists: len(keys), bytes: n, encoding: enc})
	}
	return rows, nil
}
