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
// answers Again may instead answer, and leave the data, as a second call
// would, and the call after it answers as a third.
func (s *suite[M]) checkLostReply(t *testing.T) {
	cutClient, cutter := s.b.CutClient(t)
	ctx := context.Background()
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if !v.Kind.writes() {
			continue
		}
		t.Run(v.title(), func(t *testing.T) {
			// Calls whose replies are not lost, which also load the scripts.
			m, key := s.make(t, s.b.Client, nil)
			held := take(t, v, m, key)
			want, wantErr := call(t, v, ctx, m, key, held)
			wantShape := shape(t, s.b.Client, key)
			var again, third any
			var againShape map[string]string
			if v.Again {
				again, _ = call(t, v, ctx, m, key, held)
				againShape = shape(t, s.b.Client, key)
				third, _ = call(t, v, ctx, m, key, held)
			}

			m, key = s.make(t, cutClient, nil)
			held = take(t, v, m, key)
			cuts := cutter.Cuts()
			cutter.Arm(1, key)
			got, err := call(t, v, ctx, m, key, held)
			cutter.Arm(0)
			cutter.RequireOneMore(t, cuts)

			require.Equal(t, wantErr == nil, err == nil, "error %v, where a reply not lost gave %v", err, wantErr)
			gotShape := shape(t, s.b.Client, key)
			if !v.Again || assert.ObjectsAreEqual(want, got) && assert.ObjectsAreEqual(wantShape, gotShape) {
				assert.Equal(t, want, got, "the answer, against a call whose reply was not lost")
				assert.Equal(t, wantShape, gotShape, "the data, against a call whose reply was not lost")
			} else {
				assert.Equal(t, again, got, "the answer, against a second call")
				assert.Equal(t, againShape, gotShape, "the data, against two calls")
			}
			if v.Again {
				got, err = call(t, v, ctx, m, key, held)
				require.NoError(t, err)
				assert.Equal(t, third, got, "the next call answers as a third")
			}
		})
	}
}
