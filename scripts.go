package slotlimit

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// Each atomic operation is one Lua script. redis.Script runs it with EVALSHA
// and falls back to EVAL when the server answers NOSCRIPT, which also caches
// the script again, so a SCRIPT FLUSH or a restarted server needs no care here.
var (
	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = redis.NewScript(acquireLua)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = redis.NewScript(renewLua)

	//go:embed scripts/count.lua
	countLua    string
	countScript = redis.NewScript(countLua)

	//go:embed scripts/holders.lua
	holdersLua    string
	holdersScript = redis.NewScript(holdersLua)

	//go:embed scripts/counter_acquire.lua
	counterAcquireLua    string
	counterAcquireScript = redis.NewScript(counterAcquireLua)

	//go:embed scripts/counter_release.lua
	counterReleaseLua    string
	counterReleaseScript = redis.NewScript(counterReleaseLua)
)
