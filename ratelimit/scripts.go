package ratelimit

import (
	_ "embed"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each decision is one Lua script, run by internal/script: EVALSHA, and
// EVAL when the server answers NOSCRIPT. gcra.lua and window.lua hold the
// two algorithms, which allow_all.lua shares with the one-key scripts.
var (
	//go:embed scripts/gcra.lua
	gcraLua string
	gcraLib = script.Lib{Include: "-- #include gcra.lua\n", Source: gcraLua}

	//go:embed scripts/window.lua
	windowLua string
	windowLib = script.Lib{Include: "-- #include window.lua\n", Source: windowLua}

	//go:embed scripts/allow_gcra.lua
	allowGCRALua    string
	allowGCRAScript = script.New(allowGCRALua, gcraLib)

	//go:embed scripts/allow_window.lua
	allowWindowLua    string
	allowWindowScript = script.New(allowWindowLua, windowLib)

	//go:embed scripts/allow_all.lua
	allowAllLua    string
	allowAllScript = script.New(allowAllLua, gcraLib, windowLib)
)

// replyLen is the number of integers each script returns per rule:
// allowed, remaining, retry after µs, reset after µs.
const replyLen = 4

// decode fills results from a script's reply, replyLen integers per rule.
func decode(results []Result, reply any) error {
	values, ok := reply.([]any)
	if !ok || len(values) != replyLen*len(results) {
		return callerr.UnexpectedReply(reply)
	}
	for i := range results {
		var v [replyLen]int64
		for j := range v {
			if v[j], ok = values[replyLen*i+j].(int64); !ok {
				return callerr.UnexpectedReply(reply)
			}
		}
		results[i].Allowed = v[0] == 1
		results[i].Remaining = v[1]
		results[i].RetryAfter = micros(v[2])
		results[i].ResetAfter = micros(v[3])
	}
	return nil
}

// micros is a script's µs as a Duration, keeping -1 (never) as -1.
func micros(us int64) time.Duration {
	if us < 0 {
		return -1
	}
	return time.Duration(us) * time.Microsecond
}
