package httplimit_test

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// newRate returns a ratelimit.Limiter on client with a zero Config.
func newRate(t testing.TB, client redis.UniversalClient) *ratelimit.Limiter {
	t.Helper()
	limiter, err := ratelimit.New(client, ratelimit.Config{})
	require.NoError(t, err)
	return limiter
}
