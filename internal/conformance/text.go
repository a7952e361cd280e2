package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/observe"
)

// checkErrorText: a call that meets another type's value in its keys, as
// another package's data would be, fails with Redis's refusal (or the
// package's own), which names the package, the method and the key, is a
// known outcome (not ErrOutcomeUnknown), and, for a write, is reported
// to the Observer as the call's one final event, an Error.
func (s *suite[M]) checkErrorText(t *testing.T) {
	failed := 0
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if v.Kind == Loop {
			continue
		}
		rec := &observetest.Recorder{}
		m, key := s.make(t, s.b.Client, rec)
		held := take(t, v, m, key)
		s.fill(t, m, key)
		require.NotZero(t, spoil(t, s.b.Client, key), "%s: the calls wrote no key to spoil", v.title())
		rec.Take()
		_, err := call(t, v, context.Background(), m, key, held)
		if err == nil {
			t.Logf("%s met none of the spoiled keys", v.title())
			continue
		}
		failed++
		s.assertNamed(t, v, err, key, true)
		assert.NotErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s: a refusal is a known outcome", v.title())
		if v.Kind.writes() {
			s.assertOneFinal(t, v, key, rec.Take(), observe.Error)
		}
	}
	assert.NotZero(t, failed, "no call met the spoiled keys")
}

// fill makes m write the keys it keeps at key, unless there are some
// already, by calling once each verb of m that tries or writes.
func (s *suite[M]) fill(t *testing.T, m M, key string) {
	t.Helper()
	if len(keysOf(context.Background(), t, s.b.Client, key)) > 0 {
		return
	}
	for i := range s.p.Verbs {
		if v := &s.p.Verbs[i]; v.hold == "" && (v.Kind == Try || v.Kind == Write) {
			call(t, v, context.Background(), m, key, nil)
		}
	}
}
