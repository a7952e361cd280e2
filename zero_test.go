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
			"Release":         func() error { _, err := l.Release(ctx, "x"); return err },
			"Renew":           func() error { _, err := l.Renew(ctx, "x"); return err },
			"Count":           func() error { _, err := l.Count(ctx); return err },
			"Holders":         func() error { _, err := l.Holders(ctx); return err },
			"TryAcquireBatch": func() error { _, err := l.TryAcquireBatch(ctx, []string{"x"}); return err },
			"ReleaseBatch":    func() error { _, err := l.ReleaseBatch(ctx, []string{"x"}); return err },
			"AcquireLease":    func() error { _, err := l.AcquireLease(ctx, 1); return err },
			"TryAcquireLease": func() error { _, err := l.TryAcquireLease(ctx, 1); return err },
			"Do": func() error {
				return l.Do(ctx, 1, func(context.Context) error { return errors.New("ran") })
			},
			"Lease.Release": func() error { _, err := l.Lease("x").Release(ctx); return err },
			"Lease.Renew":   func() error { _, err := l.Lease("x").Renew(ctx); return err },
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
			"Release":    func() error { _, err := c.Release(ctx); return err },
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
		_, err := zero.Release(ctx)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		_, err = zero.Renew(ctx)
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		work := zero.KeepAlive(ctx)
		<-work.Done()
		assert.ErrorIs(t, context.Cause(work), slotlimit.ErrInvalidConfig)
		<-zero.Lost()
	})
}
