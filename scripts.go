package slotlimit

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// Each atomic operation is one Lua script. redis.Script runs it with EVALSHA
// and falls back to EVAL when the server answers NOSCRIPT, which also caches
// the script again, so a SCRIPT FLUSH or a restarted server needs no care here.
var (
	// libLua holds helpers that the lease scripts share; it is prepended
	// to each of them.
	//go:embed scripts/lib.lua
	libLua string

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = redis.NewScript(libLua + acquireLua)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(libLua + releaseLua)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = redis.NewScript(libLua + renewLua)

	//go:embed scripts/count.lua
	countLua    string
	countScript = redis.NewScript(libLua + countLua)

	//go:embed scripts/holders.lua
	holdersLua    string
	holdersScript = redis.NewScript(libLua + holdersLua)

	//go:embed scripts/counter_acquire.lua
	counterAcquireLua    string
	counterAcquireScript = redis.NewScript(counterAcquireLua)

	//go:embed scripts/counter_release.lua
	counterReleaseLua    string
	counterReleaseScript = redis.NewScript(counterReleaseLua)
)
