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
// then for GCRA the TAT's lead over now (whole µs, its remainder in 1/den
// µs, den), for FixedWindow remaining, retry after µs and reset after µs.
const ruleLen = 4

// allow runs allow_gcra.lua or allow_window.lua, by p's algorithm.
// KEYS: the limit's data key (see dataKey). ARGV: for GCRA, gcraArgs;
// for FixedWindow, p.window, p.rate, n. Reply: ruleLen integers, allowed
// being the status, decoded by decodeRule.
func allow(ctx context.Context, client redis.UniversalClient, key string, p params, n int64) (Result, error) {
	var reply any
	var err error
	if p.limit.Algorithm == FixedWindow {
		reply, err = runner(client).Run(ctx, allowWindowScript, []string{key}, p.window, p.rate, n).Result()
	} else if share, tau := gcraArgs(p, n); p.den == 1 {
		reply, err = runner(client).Run(ctx, allowGCRAScript, []string{key}, share.us, tau.us, n).Result()
	} else {
		reply, err = runner(client).Run(ctx, allowGCRAScript, []string{key}, share.us, tau.us, n, p.den, share.rem, tau.rem).Result()
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Limit: p.limit}
	values, ok := reply.([]any)
	if !ok || len(values) != ruleLen || decodeRule(&res, p, n, values) != nil {
		return Result{}, callerr.UnexpectedReply(reply)
	}
	return res, nil
}

// gcraArgs returns what allow_gcra.lua and allow_all.lua take of a GCRA
// limit and n: the n events' share of a period, and tau. For an n above
// Burst, which never fits, the share is tau's whole µs and 1µs more,
// which is more than tau.
func gcraArgs(p params, n int64) (share, tau span) {
	if n > p.limit.Burst {
		return span{us: p.tau.us + 1}, p.tau
	}
	return p.share(n), p.tau
}

// allowAllArgs appends to args the ARGV of one rule of allow_all.lua:
// its algorithm ('g' or 'w'), then for GCRA the share, tau and n of
// gcraArgs, p.den and the remainders of the share and tau, and for
// FixedWindow p.window, p.rate and n.
func allowAllArgs(args []any, p params, n int64) []any {
	if p.limit.Algorithm == FixedWindow {
		return append(args, "w", p.window, p.rate, n)
	}
	share, tau := gcraArgs(p, n)
	return append(args, "g", share.us, tau.us, n, p.den, share.rem, tau.rem)
}

// allowAll runs allow_all.lua. KEYS: each rule's data key, in order.
// ARGV: built by allowAllArgs, rule by rule. Reply: {status (1 when every
// rule's events were counted, 0 when none were), then ruleLen integers
// per rule, as allow's}. results holds each rule's Limit, and gets the
// rest; ps and ns are the rules' params and n.
func allowAll(ctx context.Context, client redis.UniversalClient, keys []string, args []any, ps []params, ns []int64, results Results) error {
	reply, err := runner(client).Run(ctx, allowAllScript, keys, args...).Result()
	if err != nil {
		return err
	}
	values, ok := reply.([]any)
	if !ok || len(values) != 1+ruleLen*len(results) {
		return callerr.UnexpectedReply(reply)
	}
	for i := range results {
		if decodeRule(&results[i], ps[i], ns[i], values[1+ruleLen*i:]) != nil {
			return callerr.UnexpectedReply(reply)
		}
	}
	if status, ok := values[0].(int64); !ok || (status == 1) != results.Allowed() {
		return callerr.UnexpectedReply(reply)
	}
	return nil
}

// resetWindow runs reset_window.lua. KEYS: the window's key. ARGV: none.
// Reply: {status: 1 when it deleted a count, 0 when there was none}.
func resetWindow(ctx context.Context, client redis.UniversalClient, key string) error {
	reply, err := runner(client).Run(ctx, resetWindowScript, []string{key}).Result()
	if err != nil {
		return err
	}
	if values, ok := reply.([]any); !ok || len(values) != 1 {
		return callerr.UnexpectedReply(reply)
	}
	return nil
}

// errBadRule is decodeRule's error; its caller names the reply.
var errBadRule = callerr.UnexpectedReply(nil)

// decodeRule fills res from the first ruleLen integers of values, the
// reply to n events on a limit of params p. A FixedWindow's reply is the
// Result's figures. A GCRA reply is the TAT's lead over now after the
// call, which this divides exactly: what remains is how many events'
// shares fit between the lead and tau; a refused n waits until the lead
// plus its share is down to tau, or for ever when n is above Burst; the
// key is back to full when the lead has passed. Waits are rounded up to
// the µs.
func decodeRule(res *Result, p params, n int64, values []any) error {
	var v [ruleLen]int64
	for j := range v {
		var ok bool
		if v[j], ok = values[j].(int64); !ok {
			return errBadRule
		}
	}
	res.Allowed = v[0] == 1
	if p.limit.Algorithm == FixedWindow {
		res.Remaining = v[1]
		res.RetryAfter = micros(v[2])
		res.ResetAfter = micros(v[3])
		return nil
	}
	if v[1] < 0 || v[2] < 0 || uint64(v[2]) >= p.den || uint64(v[3]) != p.den {
		return errBadRule
	}
	lead := span{uint64(v[1]), uint64(v[2])}
	res.Remaining = 0
	if !p.tau.less(lead) {
		res.Remaining = p.events(p.sub(p.tau, lead))
	}
	switch {
	case res.Allowed:
		res.RetryAfter = 0
	case n > p.limit.Burst:
		res.RetryAfter = Never
	default:
		after := p.add(lead, p.share(n))
		if !p.tau.less(after) {
			return errBadRule // refused, yet n fits
		}
		res.RetryAfter = micros(p.sub(after, p.tau).ceil())
	}
	res.ResetAfter = micros(lead.ceil())
	return nil
}

// micros is a script's µs as a Duration, keeping -1 (never) as -1.
func micros(us int64) time.Duration {
	if us < 0 {
		return -1
	}
	return time.Duration(us) * time.Microsecond
}

// runner runs the scripts on client, which go through a script.Runner
// so that a call follows a Cluster's moves and failovers, and tells
// whether a call that failed may have written (see ErrOutcomeUnknown).
func runner(client redis.UniversalClient) *script.Runner {
	return &script.Runner{Client: client}
}
