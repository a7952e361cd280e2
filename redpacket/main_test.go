package redpacket_test

import (
	"os"
	"testing"

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
	s, err := redpacket.NewStore(b.Client, cfg)
	require.NoError(t, err)
	return s
}
