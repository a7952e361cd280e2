package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

// checkNotHeld: a release or a renewal of something the caller no longer
// holds (released already, see Hold.Lose) returns ErrNotHeld, named, a
// known outcome (not ErrOutcomeUnknown), and changes none of the data
// there was: not the hold another caller took once it was free. (It may
// note the call itself, as a release that remembers its ID, so that a
// re-sent run answers as the first, does.)
func (s *suite[M]) checkNotHeld(t *testing.T) {
	if s.p.NotHeld == nil {
		t.Skipf("%s hands out nothing to hold", s.p.Name)
	}
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if v.hold == "" || (v.Kind != Release && v.Kind != Renew) {
			continue
		}
		client, counter := s.counted(t)
		m, key := s.make(t, client, nil)
		lost := s.lose(t, v, m, key, take(t, v, m, key))
		if !v.alone {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			_, err := v.take(ctx, m, key) // another's, which must stay held
			cancel()
			require.NoError(t, err, "take another %s once the first is let go", v.hold)
		}

		settle(counter)
		before := contents(t, s.b.Client, key)
		_, err := call(t, v, context.Background(), m, key, lost)
		assert.ErrorIs(t, err, s.p.NotHeld, "%s of what is no longer held", v.title())
		assert.NotErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s of what is no longer held: a known outcome", v.title())
		s.assertNamed(t, v, err, key, true)
		after := contents(t, s.b.Client, key)
		for name, was := range before {
			assert.Equal(t, was, after[name], "%s of what is no longer held changed %s", v.title(), name)
		}
	}
}

// lose lets held go, by v's Hold.Lose or by the first Release verb of
// the hold, and returns it as the caller then has it.
func (s *suite[M]) lose(t *testing.T, v *Verb[M], m M, key string, held any) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if v.lose != nil {
		lost, err := v.lose(ctx, m, held)
		require.NoError(t, err, "let a %s go", v.hold)
		return lost
	}
	free := s.releaseOf(v.hold)
	require.NotNil(t, free, "%s: no Release verb of %s to let it go", v.title(), v.hold)
	_, err := call(t, free, ctx, m, key, held)
	require.NoError(t, err, "%s of what is held", free.title())
	return held
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

// checkLapsed: on miniredis, whose clock the suite moves, a release or a
// renewal of a hold that lapsed returns ErrNotHeld, named.
func (s *suite[M]) checkLapsed(t *testing.T) {
	if s.p.NotHeld == nil || s.p.Lapse == 0 {
		t.Skipf("nothing %s hands out lapses", s.p.Name)
	}
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if v.hold == "" || (v.Kind != Release && v.Kind != Renew) {
			continue
		}
		m, key := s.make(t, s.b.Client, nil)
		held := take(t, v, m, key)
		s.b.Advance(s.p.Lapse + time.Second)
		_, err := call(t, v, context.Background(), m, key, held)
		assert.ErrorIs(t, err, s.p.NotHeld, "%s of what lapsed", v.title())
		s.assertNamed(t, v, err, key, true)
	}
}
