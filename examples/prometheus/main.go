// Command prometheus exposes a Limiter's and a lock's metrics to
// Prometheus, through the OpenTelemetry Prometheus exporter, and checks
// itself.
//
// It runs a slotlimit.Limiter of 3 slots and a lock.Mutex on an embedded
// miniredis, with workers that take and free them for -duration: half
// the Limiter's workers TryAcquire and are often refused, the other
// half Acquire and wait, and two more take turns with the lock. A
// slotlimitotel.Observer on both records into an OpenTelemetry
// MeterProvider whose reader is the Prometheus exporter, served on
// http://-addr/metrics. At the end it fetches /metrics once, prints the
// slotlimit lines (all but the histogram buckets), and exits 1 if any
// metric it expects is missing.
//
//	go run . -duration 5s -addr 127.0.0.1:9464
//
// While it runs, curl http://127.0.0.1:9464/metrics shows the same lines.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	otelprometheus "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
	slotlimitotel "github.com/slotlimit/slotlimit/otel"
)

func main() {
	log.SetFlags(0)
	duration := flag.Duration("duration", 3*time.Second, "how long the workers run (at most 1m)")
	addr := flag.String("addr", "127.0.0.1:9464", "loopback `host:port` to serve /metrics on; port 0 picks a free one")
	workers := flag.Int("workers", 6, "workers on the Limiter (1 to 64)")
	flag.Parse()
	if err := run(*duration, *addr, *workers, os.Stdout); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}

// expected are the series /metrics must have, as the exporter names them:
// a dot becomes an underscore, a counter ends in _total, and a unit of
// seconds adds _seconds (one of "1" adds nothing).
var expected = []string{
	`slotlimit_calls_total{`,
	`slotlimit_call_duration_seconds_count{`,
	`slotlimit_refusals_total{`,
	`slotlimit_wait_duration_seconds_count{`,
	`slotlimit_handover_latency_seconds_count{`,
	`slotlimit_units_in_use{`,
	`slotlimit_units_utilization_count{`,
	`slotlimit_package="slotlimit"`,
	`slotlimit_package="lock"`,
	`slotlimit_key="example:prometheus:jobs"`,
	`slotlimit_key="example:prometheus:nightly"`,
}

func run(duration time.Duration, addr string, workers int, out io.Writer) error {
	if duration <= 0 || duration > time.Minute {
		return fmt.Errorf("-duration %v: must be above 0 and at most 1m", duration)
	}
	if workers < 1 || workers > 64 {
		return fmt.Errorf("-workers %d: must be 1 to 64", workers)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() && host != "localhost" {
		return fmt.Errorf("-addr %s: only a loopback address is allowed", addr)
	}

	mr, err := miniredis.Run()
	if err != nil {
		return err
	}
	defer mr.Close()
	mr.ClockTTL(true) // keys expire on the wall clock, as on a real server
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	// The exporter is a metric reader that a Prometheus registry collects
	// from on each scrape.
	registry := prometheus.NewRegistry()
	exporter, err := otelprometheus.New(otelprometheus.WithRegisterer(registry))
	if err != nil {
		return err
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer provider.Shutdown(context.Background()) //nolint:errcheck // nothing left to flush
	// Two keys, fixed: the key attribute adds two series per combination,
	// not one per tenant.
	obs, err := slotlimitotel.NewObserver(slotlimitotel.WithMeterProvider(provider), slotlimitotel.WithKeyAttribute())
	if err != nil {
		return err
	}
	limiter, err := slotlimit.New(rdb, slotlimit.Config{Key: "example:prometheus:jobs", Limit: 3, TTL: 10 * time.Second, Observer: obs})
	if err != nil {
		return err
	}
	mutex, err := lock.New(rdb, lock.Config{Key: "example:prometheus:nightly", TTL: 10 * time.Second, Observer: obs})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // the process ends
		<-served
	}()
	url := "http://" + ln.Addr().String() + "/metrics"
	fmt.Fprintf(out, "serving %s for %v\n", url, duration)

	if err := work(duration, workers, limiter, mutex); err != nil {
		return err
	}

	lines, err := scrape(url)
	if err != nil {
		return err
	}
	buckets := 0
	for _, line := range lines {
		if strings.Contains(line, "_bucket{") {
			buckets++
			continue
		}
		fmt.Fprintln(out, line)
	}
	fmt.Fprintf(out, "(and %d _bucket lines)\n", buckets)
	all := strings.Join(lines, "\n")
	var missing []string
	for _, want := range expected {
		if !strings.Contains(all, want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("/metrics lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// work runs the workers on limiter and mutex for duration, and returns
// the first error that is not the end of the run.
func work(duration time.Duration, workers int, limiter *slotlimit.Limiter, mutex *lock.Mutex) error {
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	deadline, _ := ctx.Deadline()
	fail := func(err error) {
		// A call cut short by the run's end is no error. Its error can come
		// a moment before ctx.Err() reports the end: the connection's read
		// deadline, set from ctx's, may fire before ctx's own timer.
		if err == nil || errors.Is(err, context.Canceled) && ctx.Err() != nil ||
			errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(deadline) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
			cancel()
		}
	}
	hold := func() { time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond) }
	for i := range workers {
		holder := fmt.Sprintf("worker-%d", i)
		wg.Go(func() {
			for ctx.Err() == nil {
				var res slotlimit.Result
				var err error
				if i%2 == 0 {
					res, err = limiter.TryAcquire(ctx, holder)
				} else {
					res, err = limiter.Acquire(ctx, holder)
				}
				if err != nil || !res.Acquired {
					fail(err)
					hold()
					continue
				}
				hold()
				err = limiter.Release(context.WithoutCancel(ctx), holder)
				fail(err)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				l, err := mutex.Lock(ctx)
				if err != nil {
					fail(err)
					continue
				}
				hold()
				fail(l.Unlock(context.WithoutCancel(ctx)))
				if l, err := mutex.TryLock(ctx); err == nil { // usually refused: the other one waits
					fail(l.Unlock(context.WithoutCancel(ctx)))
				} else if !errors.Is(err, lock.ErrNotObtained) {
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	return first
}

// scrape fetches url and returns its lines about slotlimit.
func scrape(url string) ([]string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "slotlimit_") || strings.HasPrefix(line, "# HELP slotlimit_") || strings.HasPrefix(line, "# TYPE slotlimit_") {
			lines = append(lines, line)
		}
	}
	return lines, sc.Err()
}
