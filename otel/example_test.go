package slotlimitotel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
	slotlimitotel "github.com/slotlimit/slotlimit/otel"
)

// One Observer serves a Limiter and a lock: each call is a span named
// for its operation, and counts in slotlimit.calls.
func Example() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	reader := sdkmetric.NewManualReader() // in production, a periodic reader or the Prometheus exporter
	spans := tracetest.NewSpanRecorder()  // in production, a batching exporter
	obs, err := slotlimitotel.NewObserver(
		slotlimitotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		slotlimitotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))),
	)
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := slotlimit.New(rdb, slotlimit.Config{Key: "ar:0571", Limit: 60, Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	mutex, err := lock.New(rdb, lock.Config{Key: "jobs:nightly", Observer: obs})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	if _, err := limiter.TryAcquire(ctx, "device-7"); err != nil {
		log.Fatal(err)
	}
	l, err := mutex.TryLock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		log.Fatal(err)
	}

	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "slotlimit.calls" {
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				op, _ := p.Attributes.Value("slotlimit.operation")
				outcome, _ := p.Attributes.Value("slotlimit.outcome")
				fmt.Println("slotlimit.calls", op.String(), outcome.String(), p.Value)
			}
		}
	}
	// Unordered output:
	// slotlimit.TryAcquire
	// lock.TryLock
	// lock.Unlock
	// slotlimit.calls TryAcquire acquired 1
	// slotlimit.calls TryLock acquired 1
	// slotlimit.calls Unlock released 1
}

// A call that its own ctx ends, as an Acquire that gives up waiting or a
// call cut short when the process shuts down, is the caller's choice, not
// a failure: it counts under outcome "canceled", and not in
// slotlimit.errors.
func ExampleObserver_canceled() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	reader := sdkmetric.NewManualReader()
	obs, err := slotlimitotel.NewObserver(
		slotlimitotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
	)
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := slotlimit.New(rdb, slotlimit.Config{Key: "jobs:export", Limit: 1, Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := limiter.TryAcquire(ctx, "worker-1"); err != nil { // the one slot
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := limiter.Acquire(wait, "worker-2"); !errors.Is(err, context.DeadlineExceeded) {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	errorsCounted := false
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case "slotlimit.calls":
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				op, _ := p.Attributes.Value("slotlimit.operation")
				outcome, _ := p.Attributes.Value("slotlimit.outcome")
				fmt.Println("slotlimit.calls", op.String(), outcome.String(), p.Value)
			}
		case "slotlimit.errors":
			errorsCounted = len(m.Data.(metricdata.Sum[int64]).DataPoints) > 0
		}
	}
	fmt.Println("errors counted:", errorsCounted)
	// Unordered output:
	// slotlimit.calls TryAcquire acquired 1
	// slotlimit.calls Acquire canceled 1
	// errors counted: false
}
