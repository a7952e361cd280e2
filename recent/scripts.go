package recent

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation is one Lua script, run by internal/script: EVALSHA, and
// EVAL when the server answers NOSCRIPT. Every script takes the list's
// one key and includes lib.lua, which defines the scores.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/add.lua
	addLua    string
	addScript = script.New(addLua, lib)

	//go:embed scripts/items.lua
	itemsLua    string
	itemsScript = script.New(itemsLua, lib)

	//go:embed scripts/len.lua
	lenLua    string
	lenScript = script.New(lenLua, lib)

	//go:embed scripts/remove.lua
	removeLua    string
	removeScript = script.New(removeLua, lib)
)
