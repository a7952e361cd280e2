package slotlimitotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	slotlimitotel "github.com/slotlimit/slotlimit/otel"

	"github.com/slotlimit/slotlimit/observe"
)

// BenchmarkObserve records one TryAcquire's final event into the metric
// SDK, with no tracing and with every span sampled and exported.
func BenchmarkObserve(b *testing.B) {
	for _, bench := range []struct {
		name string
		tp   trace.TracerProvider
	}{
		{"metrics", tracenoop.NewTracerProvider()},
		{"metrics+spans", sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))},
	} {
		b.Run(bench.name, func(b *testing.B) {
			ctx := context.Background()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { mp.Shutdown(ctx) }) //nolint:errcheck // in-memory
			obs, err := slotlimitotel.NewObserver(slotlimitotel.WithMeterProvider(mp), slotlimitotel.WithTracerProvider(bench.tp))
			if err != nil {
				b.Fatal(err)
			}
			e := observe.Event{Kind: observe.Acquired, Package: "slotlimit", Op: "TryAcquire", Key: "ar:0571",
				Holder: "device-7", Units: 1, InUse: 1, Limit: 60, Start: time.Now(), Duration: 60 * time.Microsecond}
			b.ReportAllocs()
			for b.Loop() {
				obs.Observe(ctx, e)
			}
		})
	}
}
