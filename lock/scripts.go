package lock

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run by internal/script: EVALSHA,
// and EVAL when the server answers NOSCRIPT. Scripts that write run
// through Mutex.runner, so that Config.Replicas acknowledge them.
var (
	//go:embed scripts/fence.lua
	fenceLua string
	// fenceLib is fence.lua, the fence of a new owner, for the scripts
	// that give the lock to one.
	fenceLib = script.Lib{Include: "-- #include fence.lua\n", Source: fenceLua}

	//go:embed scripts/obtain.lua
	obtainLua    string
	obtainScript = script.New(obtainLua, fenceLib)

	//go:embed scripts/obtain_queued.lua
	obtainQueuedLua    string
	obtainQueuedScript = script.New(obtainQueuedLua, fenceLib, waitqueue.Lib)

	//go:embed scripts/unlock.lua
	unlockLua    string
	unlockScript = script.New(unlockLua, fenceLib, waitqueue.Lib)

	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = script.New(refreshLua)

	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua)
)
