package delayqueue

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL when
// the server answers NOSCRIPT. Every script takes the
// queue's keys (see keys.go) and includes lib.lua.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/push.lua
	pushLua    string
	pushScript = script.New(pushLua, lib)

	//go:embed scripts/poll.lua
	pollLua    string
	pollScript = script.New(pollLua, lib)

	//go:embed scripts/leave.lua
	leaveLua    string
	leaveScript = script.New(leaveLua, lib)

	//go:embed scripts/ack.lua
	ackLua    string
	ackScript = script.New(ackLua, lib)

	//go:embed scripts/nack.lua
	nackLua    string
	nackScript = script.New(nackLua, lib)

	//go:embed scripts/extend.lua
	extendLua    string
	extendScript = script.New(extendLua, lib)

	//go:embed scripts/len.lua
	lenLua    string
	lenScript = script.New(lenLua, lib)

	//go:embed scripts/dead.lua
	deadLua    string
	deadScript = script.New(deadLua, lib)

	//go:embed scripts/requeue.lua
	requeueLua    string
	requeueScript = script.New(requeueLua, lib)

	//go:embed scripts/drop.lua
	dropLua    string
	dropScript = script.New(dropLua, lib)
)
