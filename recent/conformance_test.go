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

func TestConformance(t *testing.T) {
	added := conformance.Hold[*recent.List, string]{Name: "added", Take: func(ctx context.Context, l *recent.List, _ string) (string, error) {
		return "a", l.Add(ctx, "a", "b")
	}}
	conformance.Run(t, conformance.Package[*recent.List]{
		Name:            "recent",
		InvalidConfig:   recent.ErrInvalidConfig,
		InvalidArgument: recent.ErrInvalidArgument,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*recent.List, error) {
			return recent.New(client, recent.Config{Key: key, Max: 10, TTL: time.Minute, Observer: obs})
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
	})
}
