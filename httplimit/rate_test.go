package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// serve returns a test server of m around a handler that counts the
// requests it serves.
func serve(t *testing.T, m *httplimit.Middleware, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var served atomic.Int64
	srv := httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if handler != nil {
			handler(w, r)
		}
	})))
	t.Cleanup(srv.Close)
	return srv, &served
}

// get sends a GET as user (none when empty) and returns the response,
// its body read and closed.
func get(t *testing.T, srv *httptest.Server, user string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	if user != "" {
		req.Header.Set("X-User", user)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

func userKey(prefix string) func(r *http.Request) string {
	return func(r *http.Request) string {
		if user := r.Header.Get("X-User"); user != "" {
			return prefix + user
		}
		return ""
	}
}

// A rate refusal answers 429 with an honest Retry-After and the IETF
// headers, and never reaches the handler; a request no policy applies to
// passes without headers.
func TestRateRefusalAnswers429(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		prefix := b.Key(t, "rl-http:") + ":"
		t.Cleanup(func() { b.Client.Del(context.Background(), prefix+"ann", prefix+"bob") })
		m, err := httplimit.New(httplimit.Config{
			Rate:     newRate(t, b.Client),
			Policies: []httplimit.Policy{{Name: "per-user", Limit: ratelimit.Limit{Rate: 3, Period: 3 * time.Second}, Key: userKey(prefix)}},
		})
		require.NoError(t, err)
		srv, served := serve(t, m, nil)

		for i, remaining := range []string{"2", "1", "0"} {
			resp := get(t, srv, "ann")
			require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
			assert.Equal(t, `"per-user";q=3;w=3`, resp.Header.Get("RateLimit-Policy"))
			assert.Equal(t, `"per-user";r=`+remaining+`;t=`+[]string{"1", "2", "3"}[i], resp.Header.Get("RateLimit"))
			assert.Empty(t, resp.Header.Get("Retry-After"))
		}
		resp := get(t, srv, "ann")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"), "one event's share of the period")
		assert.Equal(t, `"per-user";r=0;t=3`, resp.Header.Get("RateLimit"))
		assert.Equal(t, int64(3), served.Load(), "the refused request did not reach the handler")

		assert.Equal(t, http.StatusOK, get(t, srv, "bob").StatusCode, "another user has an allowance of its own")
		resp = get(t, srv, "")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("RateLimit"), "no policy applied")

		b.Advance(time.Second)
		assert.Equal(t, http.StatusOK, get(t, srv, "ann").StatusCode, "after Retry-After")
	})
}

// Two policies in one all-or-nothing call: the tenant's refusal costs the
// user nothing, and both are in the headers.
func TestTwoPolicies(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		tenant := "{" + b.Key(t, "rl-http:") + "}"
		t.Cleanup(func() { b.Client.Del(context.Background(), tenant, tenant+":ann", tenant+":bob") })
		m, err := httplimit.New(httplimit.Config{
			Rate: newRate(t, b.Client),
			Policies: []httplimit.Policy{
				{Name: "per-user", Limit: ratelimit.Limit{Rate: 5, Period: 500 * time.Millisecond}, Key: userKey(tenant + ":")},
				{Name: "per-tenant", Limit: ratelimit.Limit{Rate: 3, Period: time.Hour, Algorithm: ratelimit.FixedWindow}, Key: func(*http.Request) string { return tenant }},
			},
		})
		require.NoError(t, err)
		srv, _ := serve(t, m, nil)
		for range 3 {
			resp := get(t, srv, "ann")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, []string{`"per-user";q=10;w=1`, `"per-tenant";q=3;w=3600`}, resp.Header.Values("RateLimit-Policy"))
		}
		resp := get(t, srv, "bob")
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, []string{`"per-user";r=5;t=0`, `"per-tenant";r=0;t=3600`}, resp.Header.Values("RateLimit"), "bob's allowance is untouched")
		assert.Equal(t, "3600", resp.Header.Get("Retry-After"))
	})
}
