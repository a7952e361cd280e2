package httplimit_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A concurrency refusal answers 503 with Retry-After; with Wait, the
// request waits for the slot a finished request releases.
func TestConcurrencyRefusalAndWait(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		slots, err := slotlimit.New(b.Client, slotlimit.Config{Key: b.Key(t, "rl-http:"), Limit: 1, TTL: 10 * time.Second})
		require.NoError(t, err)
		newServer := func(wait time.Duration, handler http.HandlerFunc) string {
			m, err := httplimit.New(httplimit.Config{Concurrency: slots, Wait: wait})
			require.NoError(t, err)
			srv, _ := serve(t, m, handler)
			return srv.URL
		}
		inside, release := make(chan struct{}), make(chan struct{})
		slow := newServer(0, func(w http.ResponseWriter, r *http.Request) {
			close(inside)
			<-release
		})
		refusing := newServer(0, nil)
		waiting := newServer(5*time.Second, nil)

		first := getAsync(slow)
		<-inside
		resp, err := http.Get(refusing)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, `"concurrency";q=1;qu="concurrent-requests"`, resp.Header.Get("RateLimit-Policy"))
		assert.Equal(t, `"concurrency";r=0`, resp.Header.Get("RateLimit"))
		retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err)
		assert.Equal(t, 1, retry, "a slot frees on a release no one can foresee: a second")

		waited := getAsync(waiting)
		time.Sleep(100 * time.Millisecond)
		select {
		case <-waited:
			t.Fatal("served while the slot was held")
		default:
		}
		close(release)
		resp = <-first
		require.NotNil(t, resp)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		select {
		case resp = <-waited:
			require.NotNil(t, resp)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "the waiter got the released slot")
			assert.Equal(t, `"concurrency";r=0`, resp.Header.Get("RateLimit"))
		case <-time.After(4 * time.Second):
			t.Fatal("the waiter was not served after the release")
		}
		n, err := slots.Count(t.Context())
		require.NoError(t, err)
		assert.Zero(t, n, "every slot was released")
	})
}

// With Wait, a request that finds no slot within Wait is answered 503.
func TestConcurrencyWaitRunsOut(t *testing.T) {
	b := redistest.Miniredis(t)
	slots, err := slotlimit.New(b.Client, slotlimit.Config{Key: b.Key(t, "rl-http:"), Limit: 1, TTL: 10 * time.Second})
	require.NoError(t, err)
	_, err = slots.TryAcquire(t.Context(), "someone")
	require.NoError(t, err)
	m, err := httplimit.New(httplimit.Config{Concurrency: slots, Wait: 200 * time.Millisecond})
	require.NoError(t, err)
	srv, served := serve(t, m, nil)
	start := time.Now()
	resp := get(t, srv, "")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "it waited")
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Zero(t, served.Load())
}

// getAsync sends a GET to url and delivers the response, its body closed,
// or nil on error.
func getAsync(url string) <-chan *http.Response {
	out := make(chan *http.Response, 1)
	go func() {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		out <- resp
	}()
	return out
}
