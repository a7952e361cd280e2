package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/observe"
)

// checkObserver: each call that writes reports exactly one final event,
// last, with the package, the method's Go name and the key. (Reads
// report nothing.)
func (s *suite[M]) checkObserver(t *testing.T) {
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if !v.Kind.writes() {
			continue
		}
		rec := &observetest.Recorder{}
		m, key := s.make(t, s.b.Client, rec)
		held := take(t, v, m, key)
		rec.Take()
		_, err := call(t, v, context.Background(), m, key, held)
		assert.NoError(t, err, v.title())
		want := observe.Kind(0)
		if err != nil {
			want = observe.Error
		}
		s.assertOneFinal(t, v, key, rec.Take(), want)
	}
}

// assertOneFinal checks that events, a call's, hold one final event, of
// kind want unless want is 0, and last, with the call's package, Op and
// key.
func (s *suite[M]) assertOneFinal(t *testing.T, v *Verb[M], key string, events []observe.Event, want observe.Kind) {
	t.Helper()
	var finals []observe.Event
	for _, e := range events {
		if e.Kind.Final() {
			finals = append(finals, e)
		}
	}
	if !assert.Len(t, finals, 1, "%s: final events of one call: %v", v.title(), observetest.Kinds(events)) {
		return
	}
	e := finals[0]
	assert.Equal(t, e, events[len(events)-1], "%s: the final event is the last", v.title())
	if want != 0 {
		assert.Equal(t, want, e.Kind, "%s: the final event's kind", v.title())
	}
	assert.Equal(t, s.p.Name, e.Package, "%s: the event's Package", v.title())
	assert.Equal(t, v.Name, e.Op, "%s: the event's Op", v.title())
	if !v.Keyless {
		assert.Equal(t, key, e.Key, "%s: the event's Key", v.title())
	}
}
