package recent_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/recent"
)

// The conformance suite runs on Lists as made by default, whose calls
// go through coalescing, and on Lists with DisableCoalescing.
func TestConformance(t *testing.T) {
	for _, alone := range []bool{false, true} {
		name := "coalescing"
		if alone {
			name = "DisableCoalescing"
		}
		t.Run(name, func(t *testing.T) { conformance.Run(t, conformancePackage(alone)) })
	}
}

func conformancePackage(alone bool) conformance.Package[*recent.List] {
	added := conformance.Hold[*recent.List, string]{Name: "added", Take: func(ctx context.Context, l *recent.List, _ string) (string, error) {
		return "a", l.Add(ctx, "a", "b")
	}}
	return conformance.Package[*recent.List]{
		Name:            "recent",
		InvalidConfig:   recent.ErrInvalidConfig,
		InvalidArgument: recent.ErrInvalidArgument,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*recent.List, error) {
			return recent.New(client, recent.Config{Key: key, Max: 10, TTL: time.Minute, Observer: obs, DisableCoalescing: alone})
		},
		Verbs: []conformance.Verb[*recent.List]{
			conformance.Method("Add", conformance.Write, func(ctx context.Context, l *recent.List, _ string) (any, error) {
				return nil, l.Add(ctx, "a", "b")
			}),
			conformance.Again(conformance.On(added, "Remove", conformance.Write, func(ctx context.Context, l *recent.List, value string) (any, error) {
				return l.Remove(ctx, value)
			})),
			conformance.Method("Items", conformance.Inspect, func(ctx context.Context, l *recent.List, _ string) (any, error) {
				items, err := l.Items(ctx, 0, 10)
				return len(items), err
			}),
			conformance.Method("Len", conformance.Inspect, func(ctx context.Context, l *recent.List, _ string) (any, error) {
				return l.Len(ctx)
			}),
		},
	}
}
