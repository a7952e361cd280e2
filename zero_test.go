package slotlimit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit"
)

// Every method of a zero or nil Limiter, Counter or Lease returns an error
// matching ErrInvalidConfig, and none panics.
func TestZeroAndNilValuesReturnErrors(t *testing.T) {
	ctx := context.Background()
	limiters := map[string]*slotlimit.Limiter{"zero": new(slotlimit.Limiter), "nil": nil}
	for name, l := range limiters {
		calls := map[string]func() error{
			"TryAcquire":      func() error { _, err := l.TryAcquire(ctx, "x"); return err },
			"TryAcquireN":     func() error { _, err := l.TryAcquireN(ctx, "x", 1); return err },
			"Acquire":         func() error { _, err := l.Acquire(ctx, "x"); return err },
			"AcquireN":        func() error { _, err := l.AcquireN(ctx, "x", 1); return err },
			"Release":         func() error { return l.Release(ctx, "x") },
			"Renew":           func() error { return l.Renew(ctx, "x") },
			"Count":           func() error { _, err := l.Count(ctx); return err },
			"Holders":         func() error { _, err := l.Holders(ctx); return err },
			"TryAcquireBatch": func() error { _, err := l.TryAcquireBatch(ctx, []string{"x"}); return err },
			"ReleaseBatch":    func() error { _, err := l.ReleaseBatch(ctx, []string{"x"}); return err },
			"AcquireLease":    func() error { _, err := l.AcquireLease(ctx, 1); return err },
			"TryAcquireLease": func() error { _, err := l.TryAcquireLease(ctx, 1); return err },
			"Do": func() error {
				return l.Do(ctx, 1, func(context.Context) error { return errors.New("ran") })
			},
			"Lease.Release": func() error { return l.Lease("x").Release(ctx) },
			"Lease.Renew":   func() error { return l.Lease("x").Renew(ctx) },
			"Lease.KeepAlive": func() error {
				work := l.Lease("x").KeepAlive(ctx)
				<-work.Done()
				return context.Cause(work)
			},
		}
		for op, call := range calls {
			assert.NotPanics(t, func() {
				assert.ErrorIs(t, call(), slotlimit.ErrInvalidConfig, "%s Limiter: %s", name, op)
			}, "%s Limiter: %s", name, op)
		}
		assert.NotPanics(t, func() { assert.Equal(t, slotlimit.Config{}, l.Config()) })
	}

	counters := map[string]*slotlimit.Counter{"zero": new(slotlimit.Counter), "nil": nil}
	for name, c := range counters {
		calls := map[string]func() error{
			"TryAcquire": func() error { _, err := c.TryAcquire(ctx); return err },
			"Acquire":    func() error { _, err := c.Acquire(ctx); return err },
			"Release":    func() error { return c.Release(ctx) },
			"Count":      func() error { _, err := c.Count(ctx); return err },
		}
		for op, call := range calls {
			assert.NotPanics(t, func() {
				assert.ErrorIs(t, call(), slotlimit.ErrInvalidConfig, "%s Counter: %s", name, op)
			}, "%s Counter: %s", name, op)
		}
		assert.NotPanics(t, func() { assert.Equal(t, slotlimit.Config{}, c.Config()) })
	}

	// A zero Lease has no Limiter behind it.
	var zero slotlimit.Lease
	assert.NotPanics(t, func() {
		err := zero.Release(ctx)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		err = zero.Renew(ctx)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		work := zero.KeepAlive(ctx)
		<-work.Done()
		assert.ErrorIs(t, context.Cause(work), slotlimit.ErrInvalidConfig)
		<-zero.Lost()
	})
}
