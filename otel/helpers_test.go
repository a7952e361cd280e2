package slotlimitotel_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	slotlimitotel "github.com/slotlimit/slotlimit/otel"
)

// harness is an Observer recording into in-memory readers.
type harness struct {
	obs    *slotlimitotel.Observer
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newHarness(t *testing.T, opts ...slotlimitotel.Option) *harness {
	t.Helper()
	h := &harness{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	t.Cleanup(func() {
		mp.Shutdown(context.Background())   //nolint:errcheck // in-memory
		h.tp.Shutdown(context.Background()) //nolint:errcheck // in-memory
	})
	obs, err := slotlimitotel.NewObserver(append([]slotlimitotel.Option{
		slotlimitotel.WithMeterProvider(mp), slotlimitotel.WithTracerProvider(h.tp)}, opts...)...)
	require.NoError(t, err)
	h.obs = obs
	return h
}

// callerSpan starts a span as a caller of the library would.
func (h *harness) callerSpan(ctx context.Context) (context.Context, trace.Span) {
	return h.tp.Tracer("caller").Start(ctx, "caller")
}

// metrics are the metrics collected at one time, by instrument name.
type metrics map[string]metricdata.Metrics

func (h *harness) collect(t *testing.T) metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	m := metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, slotlimitotel.ScopeName, sm.Scope.Name)
		for _, x := range sm.Metrics {
			m[x.Name] = x
		}
	}
	return m
}

// attrs renders s as "k=v,k=v", in key order.
func attrs(s attribute.Set) string {
	var parts []string
	for it := s.Iter(); it.Next(); {
		kv := it.Attribute()
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// sums returns the points of the counter name, by attributes.
func (m metrics) sums(t *testing.T, name, unit string) map[string]int64 {
	t.Helper()
	x, ok := m[name]
	require.True(t, ok, "no %s in %v", name, m.names())
	require.Equal(t, unit, x.Unit, name)
	sum, ok := x.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", name, x.Data)
	require.True(t, sum.IsMonotonic, name)
	points := map[string]int64{}
	for _, p := range sum.DataPoints {
		points[attrs(p.Attributes)] = p.Value
	}
	return points
}

// histograms returns the points of the histogram name, by attributes.
func (m metrics) histograms(t *testing.T, name, unit string) map[string]metricdata.HistogramDataPoint[float64] {
	t.Helper()
	x, ok := m[name]
	require.True(t, ok, "no %s in %v", name, m.names())
	require.Equal(t, unit, x.Unit, name)
	h, ok := x.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a %T", name, x.Data)
	points := map[string]metricdata.HistogramDataPoint[float64]{}
	for _, p := range h.DataPoints {
		points[attrs(p.Attributes)] = p
	}
	return points
}

// counts returns the count of each point of the histogram name.
func (m metrics) counts(t *testing.T, name string) map[string]uint64 {
	t.Helper()
	counts := map[string]uint64{}
	for a, p := range m.histograms(t, name, "s") {
		counts[a] = p.Count
	}
	return counts
}

// gauges returns the points of the int64 gauge name, by attributes.
func (m metrics) gauges(t *testing.T, name, unit string) map[string]int64 {
	t.Helper()
	x, ok := m[name]
	require.True(t, ok, "no %s in %v", name, m.names())
	require.Equal(t, unit, x.Unit, name)
	g, ok := x.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is a %T", name, x.Data)
	points := map[string]int64{}
	for _, p := range g.DataPoints {
		points[attrs(p.Attributes)] = p.Value
	}
	return points
}

func (m metrics) names() []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// keyed returns the names of the instruments with a point that has the
// slotlimit.key attribute.
func (m metrics) keyed() []string {
	var names []string
	for _, name := range m.names() {
		var sets []attribute.Set
		switch d := m[name].Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Gauge[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		}
		for _, s := range sets {
			if s.HasValue("slotlimit.key") {
				names = append(names, name)
				break
			}
		}
	}
	return names
}

// spanAttrs returns the attributes of s as a map of their values.
func spanAttrs(s sdktrace.ReadOnlySpan) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// names returns the names of spans, in the order they ended.
func names(spans []sdktrace.ReadOnlySpan) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	return names
}

// newRedis returns a client of a miniredis of the test's own, on the
// local clock, TTLs with it.
func newRedis(t *testing.T) (*redis.Client, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	mr.ClockTTL(true)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	return client, mr
}

// downRedis returns a client of an address where no Redis listens, that
// fails at once.
func downRedis(t *testing.T) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { client.Close() })
	return client
}
