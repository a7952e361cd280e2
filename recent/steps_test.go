package recent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

// A step moves the server's clock by advance, then adds or removes values
// (op "add", "remove", or "" for neither), and checks the list: its items
// newest first (want, as "value@ms", ms after the start), Len, and, for
// "remove", how many were removed.
type step struct {
	advance time.Duration
	op      string
	values  []string
	removed int64
	want    string // "" for an empty list
}

// Step tests on miniredis, whose clock stands still unless moved: every
// Add of a step is in the same millisecond.
func TestSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   recent.Config
		steps []step
	}{{
		name: "the cap",
		cfg:  recent.Config{Max: 3},
		steps: []step{
			{op: "add", values: []string{"a", "b"}, want: "b@0 a@0"},
			{advance: time.Millisecond, op: "add", values: []string{"c"}, want: "c@1 b@0 a@0"},
			{advance: time.Millisecond, op: "add", values: []string{"d"}, want: "d@2 c@1 b@0"},
			{op: "add", values: []string{"e", "f", "g", "h"}, want: "h@2 g@2 f@2"},
		},
	}, {
		name: "dedupe moves an item to the front",
		cfg:  recent.Config{Max: 3},
		steps: []step{
			{op: "add", values: []string{"a", "b", "c"}, want: "c@0 b@0 a@0"},
			{advance: 5 * time.Millisecond, op: "add", values: []string{"a"}, want: "a@5 c@0 b@0"},
			{op: "add", values: []string{"d", "b"}, want: "b@5 d@5 a@5"},
			{op: "add", values: []string{"x", "y", "x"}, want: "x@5 y@5 b@5"},
		},
	}, {
		name: "same millisecond keeps arrival order, not the values' text",
		cfg:  recent.Config{Max: 10},
		steps: []step{
			{op: "add", values: []string{"z"}, want: "z@0"},
			{op: "add", values: []string{"m"}, want: "m@0 z@0"},
			{op: "add", values: []string{"a"}, want: "a@0 m@0 z@0"},
			{op: "add", values: []string{"c", "b"}, want: "b@0 c@0 a@0 m@0 z@0"},
		},
	}, {
		name: "MaxAge",
		cfg:  recent.Config{Max: 10, MaxAge: time.Second},
		steps: []step{
			{op: "add", values: []string{"a"}, want: "a@0"},
			{advance: 600 * time.Millisecond, op: "add", values: []string{"b"}, want: "b@600 a@0"},
			{advance: 400 * time.Millisecond, want: "b@600 a@0"}, // a is exactly MaxAge old: kept
			{advance: time.Millisecond, want: "b@600"},           // older: not read
			{op: "remove", values: []string{"a"}, removed: 0, want: "b@600"},
			{advance: time.Second, want: ""},
		},
	}, {
		name: "TTL",
		cfg:  recent.Config{Max: 10, TTL: time.Second},
		steps: []step{
			{op: "add", values: []string{"a"}, want: "a@0"},
			{advance: 900 * time.Millisecond, op: "add", values: []string{"b"}, want: "b@900 a@0"},
			{advance: 900 * time.Millisecond, want: "b@900 a@0"}, // the Add restarted the TTL
			{advance: 100 * time.Millisecond, want: ""},
		},
	}, {
		name: "Remove",
		cfg:  recent.Config{Max: 5},
		steps: []step{
			{op: "add", values: []string{"a", "b", "c"}, want: "c@0 b@0 a@0"},
			{op: "remove", values: []string{"b", "nope", "b"}, removed: 1, want: "c@0 a@0"},
			{op: "remove", values: []string{"a", "c"}, removed: 2, want: ""},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := redistest.Miniredis(t)
			l := newList(t, b, tc.cfg)
			ctx := context.Background()
			for i, s := range tc.steps {
				b.Advance(s.advance)
				switch s.op {
				case "add":
					require.NoError(t, l.Add(ctx, s.values...), "step %d", i)
				case "remove":
					n, err := l.Remove(ctx, s.values...)
					require.NoError(t, err, "step %d", i)
					assert.Equal(t, s.removed, n, "step %d: removed", i)
				}
				items, err := l.Items(ctx, 0, 100)
				require.NoError(t, err, "step %d", i)
				var got []string
				for _, it := range items {
					got = append(got, fmt.Sprintf("%s@%d", it.Value, it.At.Sub(redistest.MiniredisStart).Milliseconds()))
				}
				assert.Equal(t, s.want, strings.Join(got, " "), "step %d", i)
				n, err := l.Len(ctx)
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, int64(len(items)), n, "step %d: Len", i)
				if s.want == "" {
					assert.Zero(t, b.Client.Exists(ctx, recent.DataKey(l)).Val(), "step %d: an empty list leaves no key", i)
				}
			}
		})
	}
}

// Pages: offset and count, newest first; offsets past the end and a count
// of 0 return nothing, without error.
func TestPages(t *testing.T) {
	b := redistest.Miniredis(t)
	l := newList(t, b, recent.Config{Max: 5})
	ctx := context.Background()
	require.NoError(t, l.Add(ctx, "a", "b", "c", "d"))
	for _, tc := range []struct {
		offset, count int64
		want          []string
	}{
		{0, 2, []string{"d", "c"}},
		{2, 2, []string{"b", "a"}},
		{3, 10, []string{"a"}},
		{4, 1, nil},
		{5, 1, nil},
		{1 << 40, 1 << 40, nil},
		{0, 0, nil},
	} {
		items, err := l.Items(ctx, tc.offset, tc.count)
		require.NoError(t, err, "%d, %d", tc.offset, tc.count)
		var got []string
		for _, it := range items {
			got = append(got, it.Value)
		}
		assert.Equal(t, tc.want, got, "offset %d, count %d", tc.offset, tc.count)
	}
}

// With the clock standing still, items beyond one a microsecond keep
// their order: At runs ahead by a microsecond for each.
func TestManyInOneMillisecond(t *testing.T) {
	b := redistest.Miniredis(t)
	l := newList(t, b, recent.Config{Max: 3000})
	ctx := context.Background()
	var want []string // oldest first, then reversed
	for i := range 3 {
		batch := make([]string, recent.MaxBatch)
		for j := range batch {
			batch[j] = fmt.Sprintf("v%05d", 99999-(i*recent.MaxBatch+j)) // text order opposite to arrival
		}
		require.NoError(t, l.Add(ctx, batch...))
		want = append(want, batch...)
	}
	for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
		want[i], want[j] = want[j], want[i]
	}
	items, err := l.Items(ctx, 0, 3000)
	require.NoError(t, err)
	require.Len(t, items, 3000)
	for i, it := range items {
		require.Equal(t, want[i], it.Value, "item %d", i)
	}
	assert.WithinDuration(t, redistest.MiniredisStart.Add(2999*time.Microsecond), items[0].At, 0)
	assert.WithinDuration(t, redistest.MiniredisStart, items[len(items)-1].At, 0)
}
