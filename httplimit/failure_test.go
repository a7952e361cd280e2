package httplimit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// When Redis is down, FailOpen serves the request and fail closed answers
// 503; OnError hears of it either way.
func TestRedisDownFailsOpenOrClosed(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	slots, err := slotlimit.New(down, slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	everyone := func(*http.Request) string { return "rl-http:everyone" }
	for _, tt := range []struct {
		name string
		cfg  httplimit.Config
	}{
		{"rate", httplimit.Config{Rate: newRate(t, down), Policies: []httplimit.Policy{{Name: "all", Limit: ratelimit.PerSecond(1), Key: everyone}}}},
		{"concurrency", httplimit.Config{Concurrency: slots}},
		{"concurrency wait", httplimit.Config{Concurrency: slots, Wait: 50 * time.Millisecond}},
	} {
		for _, open := range []bool{true, false} {
			var reported atomic.Int64
			cfg := tt.cfg
			cfg.FailOpen = open
			cfg.OnError = func(r *http.Request, err error) {
				if err != nil && r != nil {
					reported.Add(1)
				}
			}
			m, err := httplimit.New(cfg)
			require.NoError(t, err)
			srv, served := serve(t, m, nil)
			resp := get(t, srv, "")
			if open {
				assert.Equal(t, http.StatusOK, resp.StatusCode, "%s, fail open", tt.name)
				assert.Equal(t, int64(1), served.Load(), tt.name)
			} else {
				assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s, fail closed", tt.name)
				assert.Zero(t, served.Load(), tt.name)
			}
			assert.Equal(t, int64(1), reported.Load(), tt.name)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	limiter := newRate(t, redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}))
	key := func(*http.Request) string { return "k" }
	good := httplimit.Policy{Name: "p", Limit: ratelimit.PerSecond(1), Key: key}
	slots, err := slotlimit.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), slotlimit.Config{Key: "k", Limit: 1})
	require.NoError(t, err)
	for _, cfg := range []httplimit.Config{
		{},
		{Policies: []httplimit.Policy{good}},
		{Rate: limiter, Policies: []httplimit.Policy{{Name: "p", Limit: ratelimit.Limit{}, Key: key}}},
		{Rate: limiter, Policies: []httplimit.Policy{{Name: "p", Limit: ratelimit.PerSecond(1)}}},
		{Rate: limiter, Policies: []httplimit.Policy{{Name: "", Limit: ratelimit.PerSecond(1), Key: key}}},
		{Rate: limiter, Policies: []httplimit.Policy{{Name: `a"b`, Limit: ratelimit.PerSecond(1), Key: key}}},
		{Rate: limiter, Policies: []httplimit.Policy{good, good}},
		{Rate: limiter, Policies: []httplimit.Policy{{Name: "concurrency", Limit: ratelimit.PerSecond(1), Key: key}}, Concurrency: slots},
		{Concurrency: slots, Wait: -time.Second},
		{Concurrency: slots, ConcurrencyName: "a b"},
	} {
		m, err := httplimit.New(cfg)
		assert.True(t, errors.Is(err, httplimit.ErrInvalidConfig), "%+v: %v", cfg, err)
		assert.Nil(t, m)
	}
	for _, m := range []*httplimit.Middleware{nil, {}} {
		srv, served := serve(t, m, nil)
		assert.Equal(t, http.StatusInternalServerError, get(t, srv, "").StatusCode)
		assert.Zero(t, served.Load())
	}
}

// A Handler around a nil handler answers every request 500, as one of a
// Middleware not made by New does, and counts nothing: no panic.
func TestHandlerOfNilAnswers500(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer down.Close()
	var reported atomic.Int64
	m, err := httplimit.New(httplimit.Config{
		Rate:     newRate(t, down),
		Policies: []httplimit.Policy{{Name: "all", Limit: ratelimit.PerSecond(1), Key: func(*http.Request) string { return "k" }}},
		FailOpen: true,
		OnError:  func(*http.Request, error) { reported.Add(1) },
	})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	assert.NotPanics(t, func() {
		m.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	})
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Contains(t, rec.Body.String(), "httplimit: invalid config")
	assert.Zero(t, reported.Load(), "no limit was checked")
}
