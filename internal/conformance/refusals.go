package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// checkNilClient: New refuses a nil client, untyped or a typed nil, with
// an error matching ErrInvalidConfig whose text begins with the
// package's name.
func checkNilClient[M any](t *testing.T, p Package[M]) {
	for name, client := range map[string]redis.UniversalClient{
		"untyped nil":              nil,
		"nil *redis.Client":        (*redis.Client)(nil),
		"nil *redis.ClusterClient": (*redis.ClusterClient)(nil),
		"nil *redis.Ring":          (*redis.Ring)(nil),
	} {
		_, err := p.New(client, "conformance:nil-client", nil)
		assert.ErrorIs(t, err, p.InvalidConfig, name)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), p.Name+": "), "%s: %q does not begin %q", name, err, p.Name+": ")
		}
	}
}

// checkNewSendsNothing: New sends no command and dials no connection.
func (s *suite[M]) checkNewSendsNothing(t *testing.T) {
	client, counter := s.counted(t)
	_, err := s.p.New(client, s.key(t), nil)
	assert.NoError(t, err)
	assert.Zero(t, counter.Commands(), "New sent a command")
	assert.Zero(t, counter.Dials(), "New dialled a connection")
}

// checkZeroHandles: every verb of a nil or zero value, one not made by
// New, and every verb given a nil or zero handle by a value made by New,
// returns an error matching ErrInvalidConfig, and not ErrOutcomeUnknown,
// that names the package and the method, without a panic and without
// sending anything.
func (s *suite[M]) checkZeroHandles(t *testing.T) {
	ctx := context.Background()
	for _, m := range zeroOf[M]() {
		for i := range s.p.Verbs {
			v := &s.p.Verbs[i]
			var held any
			if len(v.zeros) > 0 {
				held = v.zeros[0]
			}
			_, err := call(t, v, ctx, m, "k", held)
			assert.ErrorIs(t, err, s.p.InvalidConfig, "%s of a %s %T", v.title(), nilOrZero(m), m)
			assert.NotErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s of a %s %T", v.title(), nilOrZero(m), m)
			s.assertNamed(t, v, err, "k", false)
		}
	}

	client, counter := s.counted(t)
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		if len(v.zeros) == 0 {
			continue
		}
		m, key := s.make(t, client, nil)
		for _, h := range v.zeros {
			sent := counter.Commands()
			_, err := call(t, v, ctx, m, key, h)
			assert.ErrorIs(t, err, s.p.InvalidConfig, "%s of a %s %T", v.title(), nilOrZero(h), h)
			assert.NotErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s of a %s %T", v.title(), nilOrZero(h), h)
			s.assertNamed(t, v, err, key, false)
			assert.Equal(t, sent, counter.Commands(), "%s of a %s %T sent a command", v.title(), nilOrZero(h), h)
		}
	}
}

// checkNilContext: every verb called with a nil context returns an error
// matching ErrInvalidArgument, and not ErrOutcomeUnknown, that names the
// package, the method and the key, without a panic and without sending
// anything.
func (s *suite[M]) checkNilContext(t *testing.T) {
	client, counter := s.counted(t)
	for i := range s.p.Verbs {
		v := &s.p.Verbs[i]
		m, key := s.make(t, client, nil)
		held := take(t, v, m, key)
		sent := settle(counter)
		_, err := call(t, v, nil, m, key, held) // the nil context is the check
		assert.ErrorIs(t, err, s.p.InvalidArgument, "%s with a nil context", v.title())
		assert.NotErrorIs(t, err, kernel.ErrOutcomeUnknown, "%s with a nil context", v.title())
		s.assertNamed(t, v, err, key, true)
		assert.Equal(t, sent, counter.Commands(), "%s with a nil context sent a command", v.title())
	}
}

// settle waits until counter has counted no command for a while, so
// that what the calls before left running (a waiter leaving the queue of
// a Poll that returned) does not count as sent by the next, and returns
// its count.
func settle(counter *redistest.CommandCounter) int64 {
	n := counter.Commands()
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		now := counter.Commands()
		if now == n {
			break
		}
		n = now
	}
	return n
}

// nilOrZero says whether x is a nil pointer or a zero value.
func nilOrZero(x any) string {
	if x == nil || isNil(x) {
		return "nil"
	}
	return "zero"
}
