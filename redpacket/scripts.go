package redpacket

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation that writes is one Lua script, run by a script.Runner:
// EVALSHA, and EVAL when the server answers NOSCRIPT. Every script
// includes lib.lua, which describes the keys.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/create.lua
	createLua    string
	createScript = script.New(createLua, lib)

	//go:embed scripts/grab.lua
	grabLua    string
	grabScript = script.New(grabLua, lib)

	//go:embed scripts/expire.lua
	expireLua    string
	expireScript = script.New(expireLua, lib)

	//go:embed scripts/ack.lua
	ackLua    string
	ackScript = script.New(ackLua)

	//go:embed scripts/sync.lua
	syncLua    string
	syncScript = script.New(syncLua)
)
