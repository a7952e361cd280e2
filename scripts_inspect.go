package slotlimit

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// The scripts that read a Limiter's key for operators (inspect.go). They
// write nothing, so they run on the client, not through slots.runner.
var (
	//go:embed scripts/inspect.lua
	inspectLua    string
	inspectScript = script.New(inspectLua, leaseLib, waitqueue.Lib)
)
