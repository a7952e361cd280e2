package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkLostReply: a write whose reply is lost once, so that go-redis
// sends it again, takes effect once and answers as a run whose reply
// was not lost: the same answer, and data of the same shape. A verb that
// Recounts may instead answer as a second call would, and a second call
// after it is refused as it would be.
func (s *suite[M]) checkLostReply(t *testing.T) {
	cutClient, cutter := s.b.CutClient(t)
	ctx := context.Background()
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if !v.Kind.writes() {
			continue
		}
		t.Run(v.title(), func(t *testing.T) {
			// A run whose reply is not lost, which also loads the scripts.
			m, key := s.make(t, s.b.Client, nil)
			held := take(t, v, m, key)
			want, wantErr := call(t, v, ctx, m, key, held)
			wantShape := shape(t, s.b.Client, key)
			var again any
			if v.Recounts {
				again, _ = call(t, v, ctx, m, key, held)
			}

			m, key = s.make(t, cutClient, nil)
			held = take(t, v, m, key)
			cuts := cutter.Cuts()
			cutter.Arm(1, key)
			got, err := call(t, v, ctx, m, key, held)
			cutter.Arm(0)
			cutter.RequireOneMore(t, cuts)

			require.Equal(t, wantErr == nil, err == nil, "error %v, without a lost reply %v", err, wantErr)
			if !v.Recounts {
				assert.Equal(t, want, got, "the answer, against one whose reply was not lost")
				assert.Equal(t, wantShape, shape(t, s.b.Client, key), "the data, against a call whose reply was not lost")
				return
			}
			if !assert.ObjectsAreEqual(want, got) {
				assert.Equal(t, again, got, "the answer: the first's or the second's")
			}
			got, err = call(t, v, ctx, m, key, held)
			require.NoError(t, err)
			assert.Equal(t, again, got, "the next call is refused, as a second call is")
		})
	}
}
