package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/conformance"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/observe"
)

func TestConformance(t *testing.T) {
	held := conformance.Hold[*lock.Mutex, *lock.Lock]{Name: "Lock", Take: func(ctx context.Context, m *lock.Mutex, _ string) (*lock.Lock, error) {
		return m.TryLock(ctx)
	}}
	token := conformance.Hold[*lock.Mutex, string]{Name: "token", Take: func(ctx context.Context, m *lock.Mutex, _ string) (string, error) {
		l, err := m.TryLock(ctx)
		if err != nil {
			return "", err
		}
		return l.Token(), nil
	}}
	conformance.Run(t, conformance.Package[*lock.Mutex]{
		Name:            "lock",
		InvalidConfig:   lock.ErrInvalidConfig,
		InvalidArgument: lock.ErrInvalidArgument,
		NotHeld:         lock.ErrNotHeld,
		Lapse:           time.Minute,
		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*lock.Mutex, error) {
			return lock.New(client, lock.Config{Key: key, TTL: time.Minute, Observer: obs})
		},
		Verbs: []conformance.Verb[*lock.Mutex]{
			conformance.Method("TryLock", conformance.Try, func(ctx context.Context, m *lock.Mutex, _ string) (any, error) {
				l, err := m.TryLock(ctx)
				return l != nil, err
			}),
			conformance.Method("Lock", conformance.Wait, func(ctx context.Context, m *lock.Mutex, _ string) (any, error) {
				l, err := m.Lock(ctx)
				return l != nil, err
			}),
			conformance.Method("Inspect", conformance.Inspect, func(ctx context.Context, m *lock.Mutex, _ string) (any, error) {
				info, err := m.Inspect(ctx)
				return info.Held(), err
			}),
			conformance.On(token, "Break", conformance.Release, func(ctx context.Context, m *lock.Mutex, token string) (any, error) {
				return nil, m.Break(ctx, token)
			}),
			conformance.On(held, "Unlock", conformance.Release, func(ctx context.Context, _ *lock.Mutex, l *lock.Lock) (any, error) {
				return nil, l.Unlock(ctx)
			}),
			conformance.On(held, "Refresh", conformance.Renew, func(ctx context.Context, _ *lock.Mutex, l *lock.Lock) (any, error) {
				return nil, l.Refresh(ctx)
			}),
			conformance.On(held, "KeepAlive", conformance.Loop, func(ctx context.Context, _ *lock.Mutex, l *lock.Lock) (any, error) {
				return nil, conformance.Stopped(l.KeepAlive(ctx))
			}),
		},
	})
}
