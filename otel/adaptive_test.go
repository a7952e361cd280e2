package slotlimitotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

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

// A limit that reads latency exports its estimate as two gauges, in
// seconds, beside the limit; one that does not exports neither.
func TestAdaptiveLatencyGauges(t *testing.T) {
	h := newHarness(t)
	client, mr := newRedis(t)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	mr.SetTime(now)
	ctx := context.Background()
	l, err := adaptive.New(client, adaptive.Config{Key: "db", Max: 10, Window: 10 * time.Millisecond, RTTTolerance: 2, Observer: h.obs})
	require.NoError(t, err)
	for _, took := range []time.Duration{20 * time.Millisecond, 30 * time.Millisecond} {
		s, err := l.TryAcquire(ctx)
		require.NoError(t, err)
		now = now.Add(took)
		mr.SetTime(now)
		require.NoError(t, s.Success(ctx))
	}
	m := h.collect(t)
	assert.Equal(t, map[string]float64{"slotlimit.package=adaptive": 0.025}, floatGauges(t, m, "slotlimit.adaptive.latency"), "the mean of 20 and 30ms")
	assert.Equal(t, map[string]float64{"slotlimit.package=adaptive": 0.020}, floatGauges(t, m, "slotlimit.adaptive.latency.no_load"))

	other := newHarness(t)
	l, err = adaptive.New(client, adaptive.Config{Key: "other", Max: 5, Observer: other.obs})
	require.NoError(t, err)
	s, err := l.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Success(ctx))
	m = other.collect(t)
	assert.NotContains(t, m.names(), "slotlimit.adaptive.latency")
	assert.NotContains(t, m.names(), "slotlimit.adaptive.latency.no_load")
}

// floatGauges returns the points of the float64 gauge name, in seconds,
// by attributes.
func floatGauges(t *testing.T, m metrics, name string) map[string]float64 {
	t.Helper()
	x, ok := m[name]
	require.True(t, ok, "no %s in %v", name, m.names())
	require.Equal(t, "s", x.Unit, name)
	g, ok := x.Data.(metricdata.Gauge[float64])
	require.True(t, ok, "%s is a %T", name, x.Data)
	points := map[string]float64{}
	for _, p := range g.DataPoints {
		points[attrs(p.Attributes)] = p.Value
	}
	return points
}
