package httplimit_test

import (
	"os"
	"testing"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.Shutdown()
	os.Exit(code)
}
