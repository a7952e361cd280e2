package ratelimit

import (
	"context"
	"embed"
	"time"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each atomic operation is one Lua script in scripts/, and its Go side
// (keys, arguments, reply) is here, beside the others. gcra.lua and
// window.lua hold the two algorithms for allow_all.lua; allow_gcra.lua
// runs gcra.lua's steps written out for its one key, and allow_window.lua
// includes window.lua on its read-first path only, after its common path
// has returned. Every script replies with a status first.
var (
	//go:embed scripts
	scriptFiles embed.FS

	allowGCRAScript   = script.Load(scriptFiles, "scripts/allow_gcra.lua")
	allowWindowScript = script.Load(scriptFiles, "scripts/allow_window.lua")
	allowAllScript    = script.Load(scriptFiles, "scripts/allow_all.lua")
	resetWindowScript = script.Load(scriptFiles, "scripts/reset_window.lua")
)

// ruleLen is the number of integers the scripts reply per rule: allowed,
// then for GCRA the TAT's lead over now (whole µs, its remainder in 1/den
// µs, den), for FixedWindow remaining, retry after µs and reset after µs.
const ruleLen = 4

// allow runs allow_gcra.lua or allow_window.lua, by p's algorithm.
// KEYS: the limit's data key (see dataKey). ARGV: for GCRA, gcraArgs;
// for FixedWindow, p.window, p.rate, n. Reply: ruleLen integers, allowed
// being the status, decoded by decodeRule.
func (l *Limiter) allow(ctx context.Context, key string, p params, n int64) (Result, error) {
	var reply any
	var err error
	run := &l.base.Runner
	if p.limit.Algorithm == FixedWindow {
		reply, err = run.Run(ctx, allowWindowScript, []string{key}, p.window, p.rate, n).Result()
	} else if share, tau := gcraArgs(p, n); p.den == 1 {
		reply, err = run.Run(ctx, allowGCRAScript, []string{key}, share.us, tau.us, n).Result()
	} else {
		reply, err = run.Run(ctx, allowGCRAScript, []string{key}, share.us, tau.us, n, p.den, share.rem, tau.rem).Result()
	}
	if err != nil {
		return Result{}, err
	}
	r := kernel.ReadReply(reply)
	res := Result{Limit: p.limit}
	r.Want(r.Len() == ruleLen-1 && decodeRule(&res, p, n, r.Status(), [3]int64{r.Int(0), r.Int(1), r.Int(2)}))
	if err := r.Err(); err != nil {
		return Result{}, err
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
// per rule, as allow's}. call.results holds each rule's Limit, and gets
// the rest.
func (l *Limiter) allowAll(ctx context.Context, call allCall) error {
	reply, err := l.base.Runner.Run(ctx, allowAllScript, call.data, call.args...).Result()
	if err != nil {
		return err
	}
	r := kernel.ReadReply(reply)
	r.Want(r.Len() == ruleLen*len(call.results))
	for i := range call.results {
		j := ruleLen * i
		r.Want(decodeRule(&call.results[i], call.params[i], call.ns[i], r.Int(j), [3]int64{r.Int(j + 1), r.Int(j + 2), r.Int(j + 3)}))
	}
	r.Want((r.Status() == 1) == call.results.Allowed())
	return r.Err()
}

// resetWindow runs reset_window.lua. KEYS: the window's key. ARGV: none.
// Reply: {status: 1 when it deleted a count, 0 when there was none}.
func (l *Limiter) resetWindow(ctx context.Context, key string) error {
	reply, err := l.base.Runner.Run(ctx, resetWindowScript, []string{key}).Result()
	if err != nil {
		return err
	}
	r := kernel.ReadReply(reply)
	r.Want(r.Len() == 0)
	return r.Err()
}

// decodeRule fills res from a rule's reply to n events on a limit of
// params p: allowed, then v, and reports whether the reply has a form the
// scripts answer. A FixedWindow's reply is the Result's figures. A GCRA
// reply is the TAT's lead over now after the call, which this divides
// exactly: what remains is how many events' shares fit between the lead
// and tau; a refused n waits until the lead plus its share is down to
// tau, or for ever when n is above Burst; the key is back to full when
// the lead has passed. Waits are rounded up to the µs.
func decodeRule(res *Result, p params, n int64, allowed int64, v [3]int64) bool {
	res.Allowed = allowed == 1
	if p.limit.Algorithm == FixedWindow {
		res.Remaining = v[0]
		res.RetryAfter = micros(v[1])
		res.ResetAfter = micros(v[2])
		return true
	}
	if v[0] < 0 || v[1] < 0 || uint64(v[1]) >= p.den || uint64(v[2]) != p.den {
		return false
	}
	lead := span{uint64(v[0]), uint64(v[1])}
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
			return false // refused, yet n fits
		}
		res.RetryAfter = micros(p.sub(after, p.tau).ceil())
	}
	res.ResetAfter = micros(lead.ceil())
	return true
}

// micros is a script's µs as a Duration, keeping -1 (never) as -1.
func micros(us int64) time.Duration {
	if us < 0 {
		return -1
	}
	return time.Duration(us) * time.Microsecond
}
