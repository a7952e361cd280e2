package slotlimit

import (
	_ "embed"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Each atomic operation is one Lua script. redis.Script runs it with EVALSHA
// and falls back to EVAL when the server answers NOSCRIPT, which also caches
// the script again, so a SCRIPT FLUSH or a restarted server needs no care here.
var (
	//go:embed scripts/lib.lua
	libLua string

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = leaseScript(acquireLua)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = leaseScript(releaseLua)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = leaseScript(renewLua)

	//go:embed scripts/count.lua
	countLua    string
	countScript = leaseScript(countLua)

	//go:embed scripts/holders.lua
	holdersLua    string
	holdersScript = leaseScript(holdersLua)

	//go:embed scripts/counter_acquire.lua
	counterAcquireLua    string
	counterAcquireScript = redis.NewScript(counterAcquireLua)

	//go:embed scripts/counter_release.lua
	counterReleaseLua    string
	counterReleaseScript = redis.NewScript(counterReleaseLua)
)

// includeLib is the line of a lease script where lib.lua's helpers go. A
// script puts it where it first needs them, so that a call that returns
// before that line does not pay for defining them.
const includeLib = "-- #include lib.lua\n"

// leaseScript returns src with lib.lua in place of its include line.
func leaseScript(src string) *redis.Script {
	if strings.Count(src, includeLib) != 1 {
		panic("slotlimit: a lease script must include lib.lua once")
	}
	return redis.NewScript(strings.Replace(src, includeLib, libLua, 1))
}
