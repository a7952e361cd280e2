package ratelimit

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each atomic operation is one Lua script in scripts/, and its Go side
// (keys, arguments, reply) is here, beside the others. gcra.lua and
// window.lua hold the two algorithms for allow_all.lua; allow_gcra.lua
// runs gcra.lua's steps written out for its one key, and allow_window.lua
// includes window.lua on its read-first path only, after its common path
// has returned. Every script replies with a status first.
var (
	//go:embed scripts/gcra.lua
	gcraLua string
	gcraLib = script.Lib{Include: "-- #include gcra.lua\n", Source: gcraLua}

	//go:embed scripts/window.lua
	windowLua string
	windowLib = script.Lib{Include: "-- #include window.lua\n", Source: windowLua}

	//go:embed scripts/allow_gcra.lua
	allowGCRALua    string
	allowGCRAScript = script.New(allowGCRALua)

	//go:embed scripts/allow_window.lua
	allowWindowLua    string
	allowWindowScript = script.New(allowWindowLua, windowLib)

	//go:embed scripts/allow_all.lua
	allowAllLua    string
	allowAllScript = script.New(allowAllLua, gcraLib, windowLib)

	//go:embed scripts/reset_window.lua
	resetWindowLua    string
	resetWindowScript = script.New(resetWindowLua)
)

// ruleLen is the number of integers the scripts reply per rule: allowed,
// remaining, retry after µs, reset after µs.
const ruleLen = 4

// allow runs allow_gcra.lua or allow_window.lua, by p's algorithm.
// KEYS: the limit's data key (see dataKey). ARGV: p.cost, p.tau, n.
// Reply: {allowed, remaining, retry after µs, reset after µs}, allowed
// being the status.
func allow(ctx context.Context, client redis.UniversalClient, key string, p params, n int64) (Result, error) {
	s := allowGCRAScript
	if p.limit.Algorithm == FixedWindow {
		s = allowWindowScript
	}
	reply, err := s.Run(ctx, client, []string{key}, p.cost, p.tau, n).Result()
	if err != nil {
		return Result{}, err
	}
	res := []Result{{Limit: p.limit}}
	values, ok := reply.([]any)
	if !ok || len(values) != ruleLen || decodeRules(res, values) != nil {
		return Result{}, callerr.UnexpectedReply(reply)
	}
	return res[0], nil
}

// allowAllArgs appends to args the ARGV of one rule of allow_all.lua:
// its algorithm ('g' or 'w'), then its p.cost, p.tau and n, as allow
// takes them.
func allowAllArgs(args []any, p params, n int64) []any {
	kind := "g"
	if p.limit.Algorithm == FixedWindow {
		kind = "w"
	}
	return append(args, kind, p.cost, p.tau, n)
}

// allowAll runs allow_all.lua. KEYS: each rule's data key, in order.
// ARGV: built by allowAllArgs, rule by rule. Reply: {status (1 when every
// rule's events were counted, 0 when none were), then ruleLen integers
// per rule, as allow's}. results holds each rule's Limit, and gets the
// rest.
func allowAll(ctx context.Context, client redis.UniversalClient, keys []string, args []any, results Results) error {
	reply, err := allowAllScript.Run(ctx, client, keys, args...).Result()
	if err != nil {
		return err
	}
	values, ok := reply.([]any)
	if !ok || len(values) != 1+ruleLen*len(results) || decodeRules(results, values[1:]) != nil {
		return callerr.UnexpectedReply(reply)
	}
	if status, ok := values[0].(int64); !ok || (status == 1) != results.Allowed() {
		return callerr.UnexpectedReply(reply)
	}
	return nil
}

// resetWindow runs reset_window.lua. KEYS: the window's key. ARGV: none.
// Reply: {status: 1 when it deleted a count, 0 when there was none}.
func resetWindow(ctx context.Context, client redis.UniversalClient, key string) error {
	reply, err := resetWindowScript.Run(ctx, client, []string{key}).Result()
	if err != nil {
		return err
	}
	if values, ok := reply.([]any); !ok || len(values) != 1 {
		return callerr.UnexpectedReply(reply)
	}
	return nil
}

// errBadRule is decodeRules's error; its caller names the reply.
var errBadRule = callerr.UnexpectedReply(nil)

// decodeRules fills results from values, ruleLen integers per rule.
func decodeRules(results []Result, values []any) error {
	for i := range results {
		var v [ruleLen]int64
		for j := range v {
			var ok bool
			if v[j], ok = values[ruleLen*i+j].(int64); !ok {
				return errBadRule
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
