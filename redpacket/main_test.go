package redpacket_test

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	sqltest.Shutdown()
	os.Exit(code)
}

// newStore returns a Store on b whose keys no other test uses.
func newStore(t *testing.T, b *redistest.Backend, cfg redpacket.Config) *redpacket.Store {
	t.Helper()
	cfg.Prefix = b.Key(t, "rp-test:")
	s, err := redpacket.New(b.Client, cfg)
	require.NoError(t, err)
	return s
}

// mustNew returns a Store on client with the default Config.
func mustNew(t *testing.T, client redis.UniversalClient) *redpacket.Store {
	t.Helper()
	s, err := redpacket.New(client, redpacket.Config{})
	require.NoError(t, err)
	return s
}

// persisterOf returns NewPersister of s's client and Config, with cfg's
// other fields.
func persisterOf(s *redpacket.Store, cfg redpacket.PersisterConfig) (*redpacket.Persister, error) {
	cfg.Store = s.Config()
	return redpacket.NewPersister(redpacket.ClientOf(s), cfg)
}
