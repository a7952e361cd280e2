package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// callTimeout bounds every call the suite makes, so that a wait that
// never ends fails its check instead of the test binary.
const callTimeout = 10 * time.Second

// Run checks that the value p describes keeps the house rules of
// docs/api.md, each rule in a subtest: on a nil client, on miniredis and
// on a real Redis (skipped when none can be had, unless
// SLOTLIMIT_REQUIRE_REDIS=1), and, for lost replies, on a real Redis.
func Run[M any](t *testing.T, p Package[M]) {
	t.Run("NilClient", func(t *testing.T) { checkNilClient(t, p) })
	for _, backend := range []struct {
		name string
		make func(*testing.T) *redistest.Backend
	}{{"miniredis", redistest.Miniredis}, {"redis", redistest.Redis}} {
		t.Run(backend.name, func(t *testing.T) {
			s := &suite[M]{p: p, b: backend.make(t)}
			t.Run("NewSendsNothing", s.checkNewSendsNothing)
			t.Run("ZeroHandles", s.checkZeroHandles)
			t.Run("NilContext", s.checkNilContext)
			t.Run("NotHeld", s.checkNotHeld)
			if !s.b.Real { // a real server's clock cannot be moved
				t.Run("Lapsed", s.checkLapsed)
			}
			t.Run("ErrorText", s.checkErrorText)
			t.Run("Observer", s.checkObserver)
		})
	}
	t.Run("LostReply", func(t *testing.T) {
		s := &suite[M]{p: p, b: redistest.Redis(t)}
		s.checkLostReply(t)
	})
	t.Run("LostForGood", func(t *testing.T) {
		s := &suite[M]{p: p, b: redistest.Redis(t)}
		s.checkLostForGood(t)
	})
}

// A suite runs the checks of one Package on one backend.
type suite[M any] struct {
	p Package[M]
	b *redistest.Backend
}

// key returns a key no other check uses, whose data is deleted when t
// ends.
func (s *suite[M]) key(t *testing.T) string {
	var buf [6]byte
	rand.Read(buf[:])
	key := "conformance:" + s.p.Name + ":" + hex.EncodeToString(buf[:])
	t.Cleanup(func() {
		ctx := context.Background()
		for _, k := range keysOf(ctx, t, s.b.Client, key) {
			s.b.Client.Del(ctx, k)
		}
	})
	return key
}

// make returns a value made by New with client on a key of its own, and
// the key.
func (s *suite[M]) make(t *testing.T, client redis.UniversalClient, obs observe.Observer) (M, string) {
	t.Helper()
	key := s.key(t)
	m, err := s.p.New(client, key, obs)
	require.NoError(t, err, "New")
	return m, key
}

// counted returns a client of the backend's server that counts what it
// sends.
func (s *suite[M]) counted(t *testing.T) (redis.UniversalClient, *redistest.CommandCounter) {
	client := s.b.NewClient(t)
	counter := &redistest.CommandCounter{}
	client.AddHook(counter)
	return client, counter
}

// take returns what v is called on, taken from m: nil for a verb of M
// itself.
func take[M any](t *testing.T, v *Verb[M], m M, key string) any {
	t.Helper()
	if v.take == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	h, err := v.take(ctx, m, key)
	require.NoError(t, err, "take a %s", v.hold)
	return h
}

// call calls v within callTimeout, failing t if it panics.
func call[M any](t *testing.T, v *Verb[M], ctx context.Context, m M, key string, held any) (answer any, err error) {
	t.Helper()
	if ctx != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", v.title(), r)
			err = errors.New("panicked")
		}
	}()
	return v.call(ctx, m, key, held)
}

// assertNamed checks that err names the package once, then v's method in
// words, then key, quoted, unless withKey is false or v is Keyless:
// `lock: refresh "orders:42": not held`.
func (s *suite[M]) assertNamed(t *testing.T, v *Verb[M], err error, key string, withKey bool) {
	t.Helper()
	if err == nil {
		return
	}
	want := s.p.Name + ": " + kernel.Words(v.Name)
	if withKey && !v.Keyless {
		want += " " + strconv.Quote(key)
	}
	text := err.Error()
	rest, ok := strings.CutPrefix(text, want)
	switch {
	case !ok || (rest != "" && rest[0] != ':' && rest[0] != ' '):
		t.Errorf("%s: error %q does not begin %q", v.title(), text, want)
	case strings.Contains(rest, s.p.Name+": "):
		t.Errorf("%s: error %q names the package more than once", v.title(), text)
	}
}
