package slotlimit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit"
)

// What the conformance suite does not call: Config of a zero or nil
// Limiter or Counter is the zero Config, the Lease a zero or nil Limiter
// hands out refuses every call with ErrInvalidConfig, and a zero Lease
// counts as lost. Nothing panics.
func TestZeroAndNilValuesReturnErrors(t *testing.T) {
	ctx := context.Background()
	for name, l := range map[string]*slotlimit.Limiter{"zero": new(slotlimit.Limiter), "nil": nil} {
		assert.NotPanics(t, func() {
			assert.Equal(t, slotlimit.Config{}, l.Config(), name)
			x := l.Lease("x")
			assert.ErrorIs(t, x.Release(ctx), slotlimit.ErrInvalidConfig, "%s Limiter: Lease.Release", name)
			assert.ErrorIs(t, x.Renew(ctx), slotlimit.ErrInvalidConfig, "%s Limiter: Lease.Renew", name)
			work := x.KeepAlive(ctx)
			<-work.Done()
			assert.ErrorIs(t, context.Cause(work), slotlimit.ErrInvalidConfig, "%s Limiter: Lease.KeepAlive", name)
		}, "%s Limiter", name)
	}
	for name, c := range map[string]*slotlimit.Counter{"zero": new(slotlimit.Counter), "nil": nil} {
		assert.NotPanics(t, func() { assert.Equal(t, slotlimit.Config{}, c.Config(), name) })
	}
	var zero slotlimit.Lease
	assert.NotPanics(t, func() { <-zero.Lost() })
}
