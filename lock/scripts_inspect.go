package lock

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
)

// The script that reads a lock for operators (inspect.go). It writes
// nothing, so it runs on the client, not through Mutex.runner.
var (
	//go:embed scripts/inspect.lua
	inspectLua    string
	inspectScript = script.New(inspectLua)
)
