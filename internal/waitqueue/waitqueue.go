// Package waitqueue holds the Lua helpers of a waiting queue kept beside a
// primitive's keys in Redis: an entry per waiter, in arrival order, that
// lapses unless the waiter refreshes it, so that a release can hand what
// it frees straight to the first live waiter. The limiter and the lock
// include them in their scripts.
package waitqueue

import (
	_ "embed"

	"github.com/slotlimit/slotlimit/internal/script"
)

//go:embed queue.lua
var source string

// Lib is queue.lua, for a script to include at its line
// "-- #include queue.lua", after the helpers it builds on, if any.
var Lib = script.Lib{Include: "-- #include queue.lua\n", Source: source}
