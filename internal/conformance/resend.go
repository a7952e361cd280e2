package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// checkLostReply: a write whose reply is lost once, so that go-redis
// sends it again, takes effect once and answers as a run whose reply
// was not lost: the same answer and error, and data of the same shape.
// A verb that answers Again may instead answer, and leave the data, as a
// second call would, and then a call after it answers as a third (a try
// that counts again never admits beyond its limit).
func (s *suite[M]) checkLostReply(t *testing.T) {
	client, counted := s.counted(t)
	cutClient, cutter := s.b.CutClient(t)
	counter := &redistest.CommandCounter{}
	cutClient.AddHook(counter)
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if !v.Kind.writes() {
			continue
		}
		t.Run(v.title(), func(t *testing.T) {
			// Calls whose replies are not lost, which also load the scripts.
			m, key := s.make(t, client, nil)
			held := take(t, v, m, key)
			want := s.outcome(t, v, m, key, held)
			settle(counted)
			wantShape := shape(t, s.b.Client, key)
			var again, third string
			var againShape map[string]string
			if v.Again {
				again = s.outcome(t, v, m, key, held)
				settle(counted)
				againShape = shape(t, s.b.Client, key)
				if v.Kind != Wait { // a third might wait for good
					third = s.outcome(t, v, m, key, held)
				}
			}

			m, key = s.make(t, cutClient, nil)
			held = take(t, v, m, key)
			settle(counter) // so that the reply cut is the call's
			cuts := cutter.Cuts()
			cutter.Arm(1, key)
			got := s.outcome(t, v, m, key, held)
			cutter.Arm(0)
			cutter.RequireOneMore(t, cuts)
			settle(counter)
			gotShape := shape(t, s.b.Client, key)
			if !v.Again || got == want && assert.ObjectsAreEqual(wantShape, gotShape) {
				assert.Equal(t, want, got, "the answer, against a call whose reply was not lost")
				assert.Equal(t, wantShape, gotShape, "the data, against a call whose reply was not lost")
				return
			}
			assert.Equal(t, again, got, "the answer, against a second call")
			assert.Equal(t, againShape, gotShape, "the data, against two calls")
			if v.Kind != Wait {
				assert.Equal(t, third, s.outcome(t, v, m, key, held), "the next call answers as a third")
			}
		})
	}
}

// checkLostForGood: a write whose every reply is lost, each try that
// go-redis makes, fails with an error matching ErrOutcomeUnknown, named.
func (s *suite[M]) checkLostForGood(t *testing.T) {
	cutClient, cutter := s.b.CutClient(t)
	counter := &redistest.CommandCounter{}
	cutClient.AddHook(counter)
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if !v.Kind.writes() {
			continue
		}
		m, key := s.make(t, cutClient, nil)
		held := take(t, v, m, key)
		settle(counter) // so that the replies cut are the call's
		cuts := cutter.Cuts()
		cutter.Arm(100, key)
		_, err := call(t, v, context.Background(), m, key, held)
		cutter.Arm(0)
		assert.Greater(t, cutter.Cuts(), cuts, "%s: no reply was cut", v.title())
		assert.ErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s whose replies were lost", v.title())
		s.assertNamed(t, v, err, key, true)
	}
}

// outcome calls v and returns its answer and its error as words that two
// runs on two keys share: the error's sentinel, or its text with the key
// left out.
func (s *suite[M]) outcome(t *testing.T, v *Verb[M], m M, key string, held any) string {
	t.Helper()
	answer, err := call(t, v, context.Background(), m, key, held)
	switch {
	case err == nil:
		return fmt.Sprintf("%v, no error", answer)
	case s.p.NotHeld != nil && errors.Is(err, s.p.NotHeld):
		return fmt.Sprintf("%v, not held", answer)
	}
	return fmt.Sprintf("%v, error %s", answer, strings.ReplaceAll(err.Error(), key, "K"))
}
