package slotlimitotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	slotlimitotel "github.com/slotlimit/slotlimit/otel"
)

// The shared limit of an adaptive limit is a gauge: it has the limit the
// first calls ran under, and follows each move, on a series of its own per
// key with WithKeyAttribute; a move adds an event to the caller's span.
func TestAdaptiveLimitIsAGauge(t *testing.T) {
	h := newHarness(t, slotlimitotel.WithKeyAttribute())
	client, _ := newRedis(t)
	ctx, span := h.callerSpan(context.Background())
	l, err := adaptive.New(client, adaptive.Config{Key: "gateway", Min: 1, Max: 10, Initial: 2, Observer: h.obs})
	require.NoError(t, err)

	first, err := l.TryAcquire(ctx)
	require.NoError(t, err)
	series := "slotlimit.key=gateway,slotlimit.package=adaptive"
	assert.Equal(t, map[string]int64{series: 2}, h.collect(t).gauges(t, "slotlimit.adaptive.limit", "{slot}"))

	second, err := l.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, first.Success(ctx)) // 2 of 2 in use: up to 3
	assert.Equal(t, map[string]int64{series: 3}, h.collect(t).gauges(t, "slotlimit.adaptive.limit", "{slot}"))
	require.NoError(t, second.Ignore(ctx))

	span.End()
	ended := h.spans.Ended()
	require.NotEmpty(t, ended)
	caller := ended[len(ended)-1]
	require.Equal(t, "caller", caller.Name())
	var moves []map[string]any
	for _, ev := range caller.Events() {
		if ev.Name == "slotlimit.limit_changed" {
			m := map[string]any{}
			for _, kv := range ev.Attributes {
				m[string(kv.Key)] = kv.Value.AsInterface()
			}
			moves = append(moves, m)
		}
	}
	assert.Equal(t, []map[string]any{{"slotlimit.key": "gateway", "slotlimit.limit.before": int64(2), "slotlimit.limit": int64(3)}}, moves)

	other := newHarness(t)
	l, err = adaptive.New(client, adaptive.Config{Key: "other", Max: 5, Observer: other.obs})
	require.NoError(t, err)
	s, err := l.TryAcquire(context.Background())
	require.NoError(t, err)
	require.NoError(t, s.Ignore(context.Background()))
	assert.Equal(t, map[string]int64{"slotlimit.package=adaptive": 1}, other.collect(t).gauges(t, "slotlimit.adaptive.limit", "{slot}"),
		"without WithKeyAttribute, one series per package")
}
