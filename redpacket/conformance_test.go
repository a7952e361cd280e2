package redpacket_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/redpacket"
)

// packet is the packet of the conformance tests: its ID is the key each
// check gives, which also names the Store's keys (Prefix).
func packet(key string) redpacket.Packet {
	return redpacket.Packet{ID: key, Total: 100, Count: 2, TTL: time.Minute}
}

func newConformanceStore(client redis.UniversalClient, key string, obs observe.Observer) (*redpacket.Store, error) {
	return redpacket.New(client, redpacket.Config{Prefix: key, Observer: obs})
}

// The suite runs on a Store that coalesces Grabs, the default, and on one
// that sends each alone.
func TestConformanceStore(t *testing.T) {
	for _, alone := range []bool{false, true} {
		t.Run(map[bool]string{false: "coalescing", true: "alone"}[alone], func(t *testing.T) {
			conformanceStore(t, func(client redis.UniversalClient, key string, obs observe.Observer) (*redpacket.Store, error) {
				return redpacket.New(client, redpacket.Config{Prefix: key, Observer: obs, DisableCoalescing: alone})
			})
		})
	}
}

func conformanceStore(t *testing.T, newStore func(redis.UniversalClient, string, observe.Observer) (*redpacket.Store, error)) {
	created := conformance.Hold[*redpacket.Store, string]{Name: "created", Take: func(ctx context.Context, s *redpacket.Store, key string) (string, error) {
		return key, s.Create(ctx, packet(key))
	}}
	conformance.Run(t, conformance.Package[*redpacket.Store]{
		Name:            "redpacket",
		InvalidConfig:   redpacket.ErrInvalidConfig,
		InvalidArgument: redpacket.ErrInvalidArgument,
		New:             newStore,
		Verbs: []conformance.Verb[*redpacket.Store]{
			conformance.Method("Create", conformance.Write, func(ctx context.Context, s *redpacket.Store, key string) (any, error) {
				return nil, s.Create(ctx, packet(key))
			}),
			conformance.On(created, "Grab", conformance.Try, func(ctx context.Context, s *redpacket.Store, id string) (any, error) {
				c, err := s.Grab(ctx, id, "u")
				return c.Seq, err
			}),
			conformance.On(created, "Inspect", conformance.Inspect, func(ctx context.Context, s *redpacket.Store, id string) (any, error) {
				snap, err := s.Inspect(ctx, id)
				return snap.SharesLeft, err
			}),
			conformance.On(created, "Remaining", conformance.Inspect, func(ctx context.Context, s *redpacket.Store, id string) (any, error) {
				shares, _, err := s.Remaining(ctx, id)
				return shares, err
			}),
		},
	})
}

func TestConformancePersister(t *testing.T) {
	db := sqltest.SQLite(t)
	require.NoError(t, redpacket.CreateSchema(context.Background(), db))
	var stores sync.Map // key -> the Store beside the Persister made with it
	grabbed := conformance.Hold[*redpacket.Persister, string]{Name: "grabbed", Take: func(ctx context.Context, _ *redpacket.Persister, key string) (string, error) {
		s, _ := stores.Load(key)
		if err := s.(*redpacket.Store).Create(ctx, packet(key)); err != nil {
			return "", err
		}
		_, err := s.(*redpacket.Store).Grab(ctx, key, "u")
		return key, err
	}}
	conformance.Run(t, conformance.Package[*redpacket.Persister]{
		Name:            "redpacket",
		InvalidConfig:   redpacket.ErrInvalidConfig,
		InvalidArgument: redpacket.ErrInvalidArgument,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*redpacket.Persister, error) {
			s, err := newConformanceStore(client, key, nil)
			if err != nil {
				return nil, err
			}
			stores.Store(key, s)
			return redpacket.NewPersister(client, redpacket.PersisterConfig{Store: redpacket.Config{Prefix: key, Observer: obs},
				DB: db, Dialect: redpacket.SQLite})
		},
		Verbs: []conformance.Verb[*redpacket.Persister]{
			conformance.Keyless(conformance.On(grabbed, "Drain", conformance.Write, func(ctx context.Context, p *redpacket.Persister, _ string) (any, error) {
				return p.Drain(ctx)
			})),
			conformance.Keyless(conformance.On(grabbed, "Pending", conformance.Inspect, func(ctx context.Context, p *redpacket.Persister, _ string) (any, error) {
				return p.Pending(ctx)
			})),
			conformance.On(grabbed, "Reconcile", conformance.Inspect, func(ctx context.Context, p *redpacket.Persister, id string) (any, error) {
				r, err := p.Reconcile(ctx, id)
				return r.OK(), err
			}),
			conformance.Keyless(conformance.Method("Run", conformance.Loop, func(ctx context.Context, p *redpacket.Persister, _ string) (any, error) {
				return nil, p.Run(ctx)
			})),
		},
	})
}
