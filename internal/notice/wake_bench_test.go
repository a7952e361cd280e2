package notice_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// BenchmarkWake measures on a real Redis how long a notice takes from a
// PUBLISH sent by one client to the goroutine that waits for it, by three
// paths, against a PING round trip, the baseline:
//
//   - hub: a Waiter, woken through its wake channel by the hub, which
//     reads go-redis's ChannelWithSubscriptions;
//   - channel: a goroutine that reads a bare ChannelWithSubscriptions,
//     which a goroutine of go-redis feeds from the connection;
//   - receive: a goroutine that reads the connection itself, with
//     Receive: one goroutine fewer between the socket and the waiter.
//
// Run it with
//
//	go test -run '^$' -bench BenchmarkWake -benchtime 20000x ./internal/notice
//
// An iteration takes each path once, in turn, so that all four meet the
// same load on a shared machine; a notice is sent once the last one
// arrived. It reports each path's p50 and p99 in µs, from the moment
// before PUBLISH (or PING) is sent to the moment the waiting goroutine
// runs (or PING returns).
func BenchmarkWake(b *testing.B) {
	addr := redistest.Addr(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	publisher := redis.NewClient(&redis.Options{Addr: addr})
	defer publisher.Close()
	paths := []*path{
		{name: "ping", step: func(ctx context.Context) (time.Time, error) {
			err := publisher.Ping(ctx).Err()
			return time.Now(), err
		}},
		hubPath(ctx, b, addr, publisher),
		barePath(ctx, b, "channel", addr, publisher, func(ps *redis.PubSub, woke chan<- time.Time) {
			for msg := range ps.ChannelWithSubscriptions() {
				if _, ok := msg.(*redis.Message); ok {
					woke <- time.Now()
				}
			}
		}),
		barePath(ctx, b, "receive", addr, publisher, func(ps *redis.PubSub, woke chan<- time.Time) {
			for {
				msg, err := ps.Receive(context.Background())
				if err != nil {
					return // closed
				}
				if _, ok := msg.(*redis.Message); ok {
					woke <- time.Now()
				}
			}
		}),
	}
	b.ResetTimer()
	for range b.N {
		for _, p := range paths {
			if err := p.take(ctx); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
		}
	}
	b.StopTimer()
	for _, p := range paths {
		p.report(b)
	}
}

// A path is one way for a notice to reach a goroutine, and its times.
type path struct {
	name string
	// step sends a command and returns when its effect reached the
	// goroutine it is for.
	step func(ctx context.Context) (time.Time, error)
	took []time.Duration
}

// take runs p's step once, within 5s, and records its time.
func (p *path) take(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start := time.Now()
	at, err := p.step(ctx)
	p.took = append(p.took, at.Sub(start))
	return err
}

// report reports p's p50 and p99.
func (p *path) report(b *testing.B) {
	if len(p.took) == 0 {
		return
	}
	slices.Sort(p.took)
	for _, q := range []int{50, 99} {
		at := p.took[len(p.took)*q/100]
		b.ReportMetric(float64(at.Nanoseconds())/1e3, fmt.Sprintf("%s-p%d-µs", p.name, q))
	}
}

// hubPath returns the path through a Waiter of a hub on a client of its
// own.
func hubPath(ctx context.Context, b *testing.B, addr string, publisher *redis.Client) *path {
	client := redis.NewClient(&redis.Options{Addr: addr})
	b.Cleanup(func() { client.Close() })
	channel := newChannel()
	w, err := joinReady(ctx, notice.NewRegistry().Site(client), channel, "waiter")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Leave)
	woke := make(chan time.Time, 1)
	go func() {
		for {
			select {
			case <-w.Wake():
				woke <- time.Now()
			case <-ctx.Done():
				return
			}
		}
	}()
	return &path{name: "hub", step: notify(publisher, channel, woke)}
}

// barePath returns the path through a bare subscription to a new channel,
// on a client of its own, that read reads until it is closed.
func barePath(ctx context.Context, b *testing.B, name, addr string, publisher *redis.Client, read func(ps *redis.PubSub, woke chan<- time.Time)) *path {
	client := redis.NewClient(&redis.Options{Addr: addr})
	b.Cleanup(func() { client.Close() })
	channel := newChannel()
	ps := client.Subscribe(ctx, channel)
	b.Cleanup(func() { ps.Close() })
	if _, err := ps.Receive(ctx); err != nil { // the confirmation
		b.Fatal(err)
	}
	woke := make(chan time.Time, 1)
	go read(ps, woke)
	return &path{name: name, step: notify(publisher, channel, woke)}
}

// notify returns a step that publishes a notice for "waiter" on channel
// and returns the time its reader was woken.
func notify(publisher *redis.Client, channel string, woke <-chan time.Time) func(ctx context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		if err := publisher.Publish(ctx, channel, "waiter:1").Err(); err != nil {
			return time.Time{}, err
		}
		select {
		case at := <-woke:
			return at, nil
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}
