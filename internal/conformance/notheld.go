package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkNotHeld: a release or a renewal of something the caller no longer
// holds (released already) returns ErrNotHeld, named, and changes
// nothing: not the hold another caller took once it was free.
func (s *suite[M]) checkNotHeld(t *testing.T) {
	if s.p.NotHeld == nil {
		t.Skipf("%s hands out nothing to hold", s.p.Name)
	}
	ctx := context.Background()
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if v.hold == "" || (v.Kind != Release && v.Kind != Renew) {
			continue
		}
		free := s.releaseOf(v.hold)
		require.NotNil(t, free, "%s: no Release verb of %s to let it go", v.title(), v.hold)
		m, key := s.make(t, s.b.Client, nil)
		held := take(t, v, m, key)
		_, err := call(t, free, ctx, m, key, held)
		require.NoError(t, err, "%s of what is held", free.title())
		if v.take != nil { // another's, taken once it is free, which must stay held
			ctx, cancel := context.WithTimeout(ctx, callTimeout)
			_, err := v.take(ctx, m, key)
			cancel()
			require.NoError(t, err, "take another %s", v.hold)
		}

		before := contents(t, s.b.Client, key)
		_, err = call(t, v, ctx, m, key, held)
		assert.ErrorIs(t, err, s.p.NotHeld, "%s of what was released", v.title())
		s.assertNamed(t, v, err, key, true)
		assert.Equal(t, before, contents(t, s.b.Client, key), "%s of what was released changed the data", v.title())
	}
}

// releaseOf returns the first Release verb of hold, or nil.
func (s *suite[M]) releaseOf(hold string) *Verb[M] {
	for i := range s.p.Verbs {
		if v := &s.p.Verbs[i]; v.hold == hold && v.Kind == Release {
			return v
		}
	}
	return nil
}
