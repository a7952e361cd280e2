package recent_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/recent"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}

// newList returns a List for a key of the test's own on b, deleted when t
// ends.
func newList(t *testing.T, b *redistest.Backend, cfg recent.Config) *recent.List {
	t.Helper()
	cfg.Key = b.Key(t, "recent-test:")
	return newListOn(t, b.Client, cfg)
}

func newListOn(t *testing.T, client redis.UniversalClient, cfg recent.Config) *recent.List {
	t.Helper()
	l, err := recent.New(client, cfg)
	require.NoError(t, err)
	return l
}

// values returns the values of all of l's items, newest first.
func values(t *testing.T, l *recent.List) []string {
	t.Helper()
	items, err := l.Items(context.Background(), 0, l.Config().Max)
	require.NoError(t, err)
	var got []string
	for _, it := range items {
		got = append(got, it.Value)
	}
	return got
}
