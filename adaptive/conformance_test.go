package adaptive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/observe"
)

// The suite runs with coalescing, the default, and with
// DisableCoalescing.
func TestConformance(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableCoalescing=%v", disable), func(t *testing.T) { conform(t, disable) })
	}
}

func conform(t *testing.T, disableCoalescing bool) {
	slot := conformance.Hold[*adaptive.Limiter, *adaptive.Slot]{Name: "Slot", Take: func(ctx context.Context, l *adaptive.Limiter, _ string) (*adaptive.Slot, error) {
		return l.TryAcquire(ctx)
	}}
	conformance.Run(t, conformance.Package[*adaptive.Limiter]{
		Name:            "adaptive",
		InvalidConfig:   adaptive.ErrInvalidConfig,
		InvalidArgument: adaptive.ErrInvalidArgument,
		NotHeld:         adaptive.ErrNotHeld,
		Lapse:           time.Minute,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*adaptive.Limiter, error) {
			return adaptive.New(client, adaptive.Config{Key: key, Max: 10, Initial: 5, TTL: time.Minute, Observer: obs,
				DisableCoalescing: disableCoalescing})
		},
		Verbs: []conformance.Verb[*adaptive.Limiter]{
			conformance.Method("TryAcquire", conformance.Try, func(ctx context.Context, l *adaptive.Limiter, _ string) (any, error) {
				s, err := l.TryAcquire(ctx)
				return s != nil, err
			}),
			conformance.Method("Acquire", conformance.Wait, func(ctx context.Context, l *adaptive.Limiter, _ string) (any, error) {
				s, err := l.Acquire(ctx)
				return s != nil, err
			}),
			conformance.Method("Limit", conformance.Inspect, func(ctx context.Context, l *adaptive.Limiter, _ string) (any, error) {
				return l.Limit(ctx)
			}),
			conformance.Method("Inspect", conformance.Inspect, func(ctx context.Context, l *adaptive.Limiter, _ string) (any, error) {
				info, err := l.Inspect(ctx)
				return info.InUse, err
			}),
			conformance.On(slot, "Success", conformance.Release, func(ctx context.Context, _ *adaptive.Limiter, s *adaptive.Slot) (any, error) {
				return nil, s.Success(ctx)
			}),
			conformance.On(slot, "Dropped", conformance.Release, func(ctx context.Context, _ *adaptive.Limiter, s *adaptive.Slot) (any, error) {
				return nil, s.Dropped(ctx)
			}),
			conformance.On(slot, "Ignore", conformance.Release, func(ctx context.Context, _ *adaptive.Limiter, s *adaptive.Slot) (any, error) {
				return nil, s.Ignore(ctx)
			}),
		},
	})
}
