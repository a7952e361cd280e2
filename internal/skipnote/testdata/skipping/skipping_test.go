// Package skipping is run by skipnote's test as go test would run any
// package of the module: one of its tests is skipped for want of a server.
package skipping

import (
	"errors"
	"os"
	"testing"

	"github.com/slotlimit/slotlimit/internal/skipnote"
)

func TestMain(m *testing.M) {
	code := m.Run()
	skipnote.Report()
	os.Exit(code)
}

func TestNeedsRedis(t *testing.T) {
	skipnote.Skip(t, "real Redis", errors.New("redis-server not found on PATH"), "install redis-server")
}

func TestNeedsNothing(t *testing.T) {}
