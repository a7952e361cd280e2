package slotlimit

import (
	_ "embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script. A script.Script runs it with
// EVALSHA and falls back to EVAL when the server answers NOSCRIPT, which
// also caches the script again, so a SCRIPT FLUSH or a restarted server
// needs no care here. Scripts that write run through slots.runner, so
// that Config.Replicas acknowledge them.
var (
	//go:embed scripts/lib.lua
	libLua string
	// leaseLib is lib.lua, the helpers of the lease scripts. A lease script
	// holds its include line where it first needs them, so that a call
	// that returns before that line does not pay for defining them.
	leaseLib = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = script.New(acquireLua, leaseLib)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = script.New(releaseLua, leaseLib, waitqueue.Lib)

	//go:embed scripts/acquire_queued.lua
	acquireQueuedLua    string
	acquireQueuedScript = script.New(acquireQueuedLua, leaseLib, waitqueue.Lib)

	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua, leaseLib)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = script.New(renewLua, leaseLib)

	//go:embed scripts/count.lua
	countLua    string
	countScript = script.New(countLua, leaseLib)

	//go:embed scripts/holders.lua
	holdersLua    string
	holdersScript = script.New(holdersLua, leaseLib)

	//go:embed scripts/counter_acquire.lua
	counterAcquireLua    string
	counterAcquireScript = script.New(counterAcquireLua)

	//go:embed scripts/counter_release.lua
	counterReleaseLua    string
	counterReleaseScript = script.New(counterReleaseLua)
)

// formatMillis formats d in whole milliseconds, as the scripts take times.
func formatMillis(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
