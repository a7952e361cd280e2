package slotlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/observe"
)

func TestConformanceLimiter(t *testing.T) {
	type l = slotlimit.Limiter
	holder := conformance.Hold[*l, string]{Name: "holder", Take: func(ctx context.Context, l *l, _ string) (string, error) {
		id := slotlimit.NewHolderID()
		_, err := l.TryAcquire(ctx, id)
		return id, err
	}}
	lease := conformance.Hold[*l, *slotlimit.Lease]{Name: "Lease", Take: func(ctx context.Context, l *l, _ string) (*slotlimit.Lease, error) {
		return l.TryAcquireLease(ctx, 1)
	}}
	conformance.Run(t, conformance.Package[*l]{
		Name:            "slotlimit",
		InvalidConfig:   slotlimit.ErrInvalidConfig,
		InvalidArgument: slotlimit.ErrInvalidArgument,
		NotHeld:         slotlimit.ErrNotHeld,
		Lapse:           time.Minute,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*l, error) {
			return slotlimit.New(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute, Observer: obs})
		},
		Verbs: []conformance.Verb[*l]{
			conformance.Method("TryAcquire", conformance.Try, func(ctx context.Context, l *l, _ string) (any, error) {
				res, err := l.TryAcquire(ctx, "h")
				return res.Acquired, err
			}),
			conformance.Method("TryAcquireN", conformance.Try, func(ctx context.Context, l *l, _ string) (any, error) {
				res, err := l.TryAcquireN(ctx, "h", 2)
				return res.Acquired, err
			}),
			conformance.Method("Acquire", conformance.Wait, func(ctx context.Context, l *l, _ string) (any, error) {
				res, err := l.Acquire(ctx, "h")
				return res.Acquired, err
			}),
			conformance.Method("AcquireN", conformance.Wait, func(ctx context.Context, l *l, _ string) (any, error) {
				res, err := l.AcquireN(ctx, "h", 2)
				return res.Acquired, err
			}),
			conformance.Method("TryAcquireBatch", conformance.Try, func(ctx context.Context, l *l, _ string) (any, error) {
				res, err := l.TryAcquireBatch(ctx, []string{"h"})
				return len(res) == 1 && res[0].Acquired, err
			}),
			conformance.Method("TryAcquireLease", conformance.Try, func(ctx context.Context, l *l, _ string) (any, error) {
				x, err := l.TryAcquireLease(ctx, 1)
				return x != nil, err
			}),
			conformance.Method("AcquireLease", conformance.Wait, func(ctx context.Context, l *l, _ string) (any, error) {
				x, err := l.AcquireLease(ctx, 1)
				return x != nil, err
			}),
			conformance.Method("Do", conformance.Wait, func(ctx context.Context, l *l, _ string) (any, error) {
				ran := false
				err := l.Do(ctx, 1, func(context.Context) error { ran = true; return nil })
				return ran, err
			}),
			conformance.Again(conformance.On(holder, "Release", conformance.Release, func(ctx context.Context, l *l, h string) (any, error) {
				return nil, l.Release(ctx, h)
			})),
			conformance.On(holder, "Renew", conformance.Renew, func(ctx context.Context, l *l, h string) (any, error) {
				return nil, l.Renew(ctx, h)
			}),
			// A batch reports, for each holder, whether it was held,
			// rather than ErrNotHeld: a write, to the suite.
			conformance.Again(conformance.On(holder, "ReleaseBatch", conformance.Write, func(ctx context.Context, l *l, h string) (any, error) {
				return l.ReleaseBatch(ctx, []string{h})
			})),
			conformance.On(lease, "Release", conformance.Release, func(ctx context.Context, _ *l, x *slotlimit.Lease) (any, error) {
				return nil, x.Release(ctx)
			}),
			conformance.On(lease, "Renew", conformance.Renew, func(ctx context.Context, _ *l, x *slotlimit.Lease) (any, error) {
				return nil, x.Renew(ctx)
			}),
			conformance.On(lease, "KeepAlive", conformance.Loop, func(ctx context.Context, _ *l, x *slotlimit.Lease) (any, error) {
				return nil, conformance.Stopped(x.KeepAlive(ctx))
			}),
			conformance.Method("Count", conformance.Inspect, func(ctx context.Context, l *l, _ string) (any, error) {
				return l.Count(ctx)
			}),
			conformance.Method("Holders", conformance.Inspect, func(ctx context.Context, l *l, _ string) (any, error) {
				hs, err := l.Holders(ctx)
				return len(hs), err
			}),
			conformance.Method("Inspect", conformance.Inspect, func(ctx context.Context, l *l, _ string) (any, error) {
				s, err := l.Inspect(ctx)
				return s.InUse, err
			}),
			conformance.Method("Refusals", conformance.Inspect, func(ctx context.Context, l *l, _ string) (any, error) {
				return l.Refusals(ctx)
			}),
		},
	})
}

func TestConformanceCounter(t *testing.T) {
	type c = slotlimit.Counter
	// A Counter's slot carries no name: the Hold is of the count taken.
	taken := conformance.Hold[*c, int]{Name: "slot", Nameless: true, Take: func(ctx context.Context, c *c, _ string) (int, error) {
		_, err := c.TryAcquire(ctx)
		return 1, err
	}}
	conformance.Run(t, conformance.Package[*c]{
		Name:            "slotlimit",
		InvalidConfig:   slotlimit.ErrInvalidConfig,
		InvalidArgument: slotlimit.ErrInvalidArgument,
		NotHeld:         slotlimit.ErrNotHeld,
		Lapse:           time.Minute,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*c, error) {
			return slotlimit.NewCounter(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute, Observer: obs})
		},
		Verbs: []conformance.Verb[*c]{
			// A Counter's acquire sent again counts again.
			conformance.Again(conformance.Method("TryAcquire", conformance.Try, func(ctx context.Context, c *c, _ string) (any, error) {
				res, err := c.TryAcquire(ctx)
				return res.Acquired, err
			})),
			conformance.Again(conformance.Method("Acquire", conformance.Wait, func(ctx context.Context, c *c, _ string) (any, error) {
				res, err := c.Acquire(ctx)
				return res.Acquired, err
			})),
			conformance.On(taken, "Release", conformance.Release, func(ctx context.Context, c *c, _ int) (any, error) {
				return nil, c.Release(ctx)
			}),
			conformance.Method("Count", conformance.Inspect, func(ctx context.Context, c *c, _ string) (any, error) {
				return c.Count(ctx)
			}),
		},
	})
}
