package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/ratelimit"
)

func TestConformance(t *testing.T) {
	// Limits of one event a minute: a second call is refused, as every
	// later one, so that a call counted twice shows.
	gcra := ratelimit.PerMinute(1)
	window := ratelimit.Limit{Rate: 1, Period: time.Minute, Algorithm: ratelimit.FixedWindow}
	counted := conformance.Hold[*ratelimit.Limiter, string]{Name: "counted", Take: func(ctx context.Context, l *ratelimit.Limiter, key string) (string, error) {
		_, err := l.Allow(ctx, key, gcra)
		return key, err
	}}
	// The rules hold with coalescing, the default, and without.
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableCoalescing=%v", disable), func(t *testing.T) {
			conformance.Run(t, limiterPackage(disable, counted, gcra, window))
		})
	}
}

// limiterPackage describes the Limiter to the conformance suite, its
// Config's DisableCoalescing set to disable.
func limiterPackage(disable bool, counted conformance.Hold[*ratelimit.Limiter, string], gcra, window ratelimit.Limit) conformance.Package[*ratelimit.Limiter] {
	return conformance.Package[*ratelimit.Limiter]{
		Name:            "ratelimit",
		InvalidConfig:   ratelimit.ErrInvalidConfig,
		InvalidArgument: ratelimit.ErrInvalidArgument,
		New: func(client redis.UniversalClient, _ string, obs observe.Observer) (*ratelimit.Limiter, error) {
			return ratelimit.New(client, ratelimit.Config{Observer: obs, DisableCoalescing: disable})
		},
		Verbs: []conformance.Verb[*ratelimit.Limiter]{
			conformance.Again(conformance.Method("Allow", conformance.Try, func(ctx context.Context, l *ratelimit.Limiter, key string) (any, error) {
				res, err := l.Allow(ctx, key, gcra)
				return res.Allowed, err
			})),
			conformance.Again(conformance.Method("AllowN", conformance.Try, func(ctx context.Context, l *ratelimit.Limiter, key string) (any, error) {
				res, err := l.AllowN(ctx, key, window, 1)
				return res.Allowed, err
			})),
			conformance.Again(conformance.Method("AllowAll", conformance.Try, func(ctx context.Context, l *ratelimit.Limiter, key string) (any, error) {
				res, err := l.AllowAll(ctx, []ratelimit.Rule{{Key: key, Limit: gcra}})
				return res.Allowed(), err
			})),
			conformance.On(counted, "Reset", conformance.Write, func(ctx context.Context, l *ratelimit.Limiter, key string) (any, error) {
				return nil, l.Reset(ctx, key, gcra)
			}),
		},
	}
}
