package lock

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run by internal/script: EVALSHA,
// and EVAL when the server answers NOSCRIPT. Scripts that write run
// through Mutex.runner, so that Config.Replicas acknowledge them.
//
// TryLock needs no script: SET NX and TIME in one MULTI take the lock and
// read its fence (see obtain.go).
var (
	//go:embed scripts/obtain_queued.lua
	obtainQueuedLua    string
	obtainQueuedScript = script.New(obtainQueuedLua, waitqueue.Lib)

	//go:embed scripts/unlock.lua
	unlockLua    string
	unlockScript = script.New(unlockLua)

	//go:embed scripts/hand_off.lua
	handOffLua    string
	handOffScript = script.New(handOffLua, waitqueue.Lib)

	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = script.New(refreshLua)

	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua)
)
