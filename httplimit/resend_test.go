package httplimit_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// A request whose rate check lost its reply, sent again by go-redis, is
// counted again, as ratelimit.Limiter.AllowAll says: it can be refused
// early, but no more requests are served than the policy allows, and no
// Redis failure is reported.
func TestResentRateCheckNeverServesBeyondTheLimit(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		client, cutter := b.CutClient(t)
		prefix := b.Key(t, "rl-http:")
		key := prefix + "ann"
		t.Cleanup(func() { b.Client.Del(t.Context(), key) })
		limit := ratelimit.Limit{Rate: 3, Period: time.Hour}
		var failures []error
		var mu sync.Mutex
		m, err := httplimit.New(httplimit.Config{
			Rate:     newRate(t, client),
			Policies: []httplimit.Policy{{Name: "per-user", Limit: limit, Key: userKey(prefix)}},
			OnError: func(r *http.Request, err error) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, err)
			},
		})
		require.NoError(t, err)
		srv, served := serve(t, m, nil)
		_, err = newRate(t, b.Client).AllowN(t.Context(), key, limit, 0)
		require.NoError(t, err, "the script is loaded")
		_, err = newRate(t, b.Client).AllowAll(t.Context(), []ratelimit.Rule{{Key: key, Limit: limit}})
		require.NoError(t, err, "the script is loaded")
		require.NoError(t, b.Client.Del(t.Context(), key).Err())

		var codes []int
		for range 4 {
			cutter.Arm(1, "evalsha", key)
			codes = append(codes, get(t, srv, "ann").StatusCode)
		}
		assert.Equal(t, 4, cutter.Cuts())
		assert.Equal(t, []int{http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusTooManyRequests}, codes,
			"the first request took two of three; the second took the last and was refused")
		assert.Equal(t, int64(1), served.Load())
		res, err := newRate(t, b.Client).AllowN(t.Context(), key, limit, 0)
		require.NoError(t, err)
		assert.Zero(t, res.Remaining, "three counted, never more")
		mu.Lock()
		defer mu.Unlock()
		assert.Empty(t, failures)
	})
}

// A request whose concurrency acquire or release lost its reply, sent
// again by go-redis, is served once and leaves no slot held.
func TestResentAcquireAndReleaseLeaveNoSlotHeld(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		client, cutter := b.CutClient(t)
		key := b.Key(t, "rl-http:")
		cfg := slotlimit.Config{Key: key, Limit: 1, TTL: 10 * time.Second}
		slots, err := slotlimit.New(client, cfg)
		require.NoError(t, err)
		plain, err := slotlimit.New(b.Client, cfg)
		require.NoError(t, err)
		var failures []error
		var mu sync.Mutex
		m, err := httplimit.New(httplimit.Config{
			Concurrency: slots,
			OnError: func(r *http.Request, err error) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, err)
			},
		})
		require.NoError(t, err)
		srv, served := serve(t, m, func(w http.ResponseWriter, r *http.Request) {
			cutter.Arm(1, "evalsha", key) // the release's reply
		})
		require.Equal(t, http.StatusOK, get(t, srv, "").StatusCode, "the scripts are loaded")

		for i := range 3 {
			cutter.Arm(1, "evalsha", key) // the acquire's reply
			resp := get(t, srv, "")
			assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
			assert.Equal(t, `"concurrency";r=0`, resp.Header.Get("RateLimit"), "request %d: one slot, held once", i)
			require.Eventually(t, func() bool {
				n, err := plain.Count(t.Context())
				return err == nil && n == 0
			}, 5*time.Second, 10*time.Millisecond, "request %d: the slot was released", i)
		}
		assert.Equal(t, 2*4-1, cutter.Cuts(), "every acquire's reply and every release's but the first was cut")
		assert.Equal(t, int64(4), served.Load())
		mu.Lock()
		defer mu.Unlock()
		assert.Empty(t, failures, "no Redis failure reported")
	})
}
