// Package waitqueue holds the Lua helpers of a waiting queue kept beside a
// primitive's keys in Redis: an entry per waiter, in arrival order, that
// lapses unless the waiter refreshes it, so that a release can hand what
// it frees straight to the first live waiter. The limiter and the lock
// include them in their scripts.
//
// It also holds the life of a waiter in a process, once for every
// primitive (Run): join the notice channel, try, sleep until a notice
// hands the waiter what it waits for (trusted only until the deadline the
// hand-off gave it, by the server's clock, checked again once it is
// taken), return only what the waiter still holds, and, when the wait
// fails or its context ends, leave the queue and pass on whatever was
// handed to it meanwhile.
package waitqueue

import (
	_ "embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/script"
)

//go:embed queue.lua
var source string

// Lib is queue.lua, for a script to include at its line
// "-- #include queue.lua", after the helpers it builds on, if any.
var Lib = script.Lib{Include: "-- #include queue.lua\n", Source: source}

// EntryTTL is how long a waiter keeps its place in a queue without trying
// again, so that a waiter that dies leaves the queue then. It is also the
// claim time of what a release hands to a waiter: a waiter that died as it
// was served holds it this long at most.
const EntryTTL = 3 * time.Second

// EntryTTLArg is EntryTTL in ms, as the scripts take it.
var EntryTTLArg any = strconv.FormatInt(EntryTTL.Milliseconds(), 10)
