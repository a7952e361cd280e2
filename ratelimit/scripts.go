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
// has returned. allow_gcra_batch.lua and allow_window_batch.lua decide
// several calls of one n on one key and limit at once, for the calls
// that coalescing joins (see Limiter.send). Every script replies with a
// status first.
var (
	//go:embed scripts
	scriptFiles embed.FS

	allowGCRAScript        = script.Load(scriptFiles, "scripts/allow_gcra.lua")
	allowWindowScript      = script.Load(scriptFiles, "scripts/allow_window.lua")
	allowGCRABatchScript   = script.Load(scriptFiles, "scripts/allow_gcra_batch.lua")
	allowWindowBatchScript = script.Load(scriptFiles, "scripts/allow_window_batch.lua")
	allowAllScript         = script.Load(scriptFiles, "scripts/allow_all.lua")
	resetWindowScript      = script.Load(scriptFiles, "scripts/reset_window.lua")
	inspectScript          = script.Load(scriptFiles, "scripts/inspect.lua")
)

// ruleLen is the number of integers the scripts reply per rule: allowed,
// then for GCRA the TAT's lead over now (whole µs, its remainder in 1/den
// µs, den), for FixedWindow remaining, retry after µs and reset after µs.
const ruleLen = 4

// allow runs allow_gcra.lua or allow_window.lua, by p's algorithm, for
// a call on user's key. KEYS: the limit's data key (see dataKey). ARGV: for GCRA, gcraArgs;
// for FixedWindow, p.window, p.rate, n. Reply: ruleLen integers, allowed
// being the status, decoded by decodeRule.
//
// When the rate record beside the user's key is due (recordArgs), the
// call writes it too: KEYS gain the record's name, and ARGV end with its
// value and expiry (allow_gcra.lua then takes all six of its arguments).
// A call that Redis refused with the record, before it ran anything
// (record.Refused: an ACL that grants the user's keys but not the
// record's), is sent again at once without it, and the record waits its
// minute, so that it never fails the call.
func (l *Limiter) allow(ctx context.Context, user, key string, p params, n int64) (Result, error) {
	name, value, ttl := l.recordArgs(user, p)
	reply, err := l.allowScript(ctx, key, p, n, name, value, ttl)
	if err != nil && name != "" {
		reply, err = l.recordFailed(name, err, func() (any, error) {
			return l.allowScript(ctx, key, p, n, "", nil, nil)
		})
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

// allowScript runs allow's script once, with the record named name (its
// value and expiry), or without one when name is "".
func (l *Limiter) allowScript(ctx context.Context, key string, p params, n int64, name string, value, ttl any) (any, error) {
	run := &l.base.Runner
	keys := []string{key}
	if name != "" {
		keys = append(keys, name)
	}
	if p.limit.Algorithm == FixedWindow {
		args := []any{p.window, p.rate, n}
		if name != "" {
			args = append(args, value, ttl)
		}
		return run.Run(ctx, allowWindowScript, keys, args...).Result()
	}
	share, tau := gcraArgs(p, n)
	switch {
	case p.den == 1 && name == "":
		return run.Run(ctx, allowGCRAScript, keys, share.us, tau.us, n).Result()
	case name == "":
		return run.Run(ctx, allowGCRAScript, keys, share.us, tau.us, n, p.den, share.rem, tau.rem).Result()
	}
	return run.Run(ctx, allowGCRAScript, keys, share.us, tau.us, n, p.den, share.rem, tau.rem, value, ttl).Result()
}

// recordFailed handles err, the error of a script call that carried the
// rate record named name: a refusal that ran nothing (record.Refused)
// leaves the record counted written and returns what again, the call
// sent without it; any other error makes the record due again, and is
// returned.
func (l *Limiter) recordFailed(name string, err error, again func() (any, error)) (any, error) {
	if l.memo.Carried(name, err) {
		return again()
	}
	return nil, err
}

// allowBatch runs allow_gcra_batch.lua or allow_window_batch.lua, by p's
// algorithm, for calls calls of n events each on user's key, whose data
// key is key, decided in turn,
// and returns each call's Result, in order. KEYS: the limit's data key.
// ARGV: for GCRA, the share, tau and n of gcraArgs, p.den and the
// remainders of the share and tau, then calls; for FixedWindow, p.window,
// p.rate, n, calls. Reply: {admitted, then for GCRA the TAT's lead over
// now before the first call (whole µs, its remainder in 1/den µs, den),
// for FixedWindow the rate less the count before the first call and the
// window's PTTL in ms (-2 for none)}, decoded by decodeGCRABatch or
// decodeWindowBatch.
// The rate record is written as allow writes it, and a refusal of it
// sends the batch again without it, as allow does.
func (l *Limiter) allowBatch(ctx context.Context, user, key string, p params, n int64, calls int) ([]Result, error) {
	var args []any
	s := allowWindowBatchScript
	if p.limit.Algorithm == FixedWindow {
		args = []any{p.window, p.rate, n, calls}
	} else {
		share, tau := gcraArgs(p, n)
		s, args = allowGCRABatchScript, []any{share.us, tau.us, n, p.den, share.rem, tau.rem, calls}
	}
	run := func(keys []string, args ...any) (any, error) {
		return l.base.Runner.Run(ctx, s, keys, args...).Result()
	}
	var reply any
	var err error
	if name, value, ttl := l.recordArgs(user, p); name == "" {
		reply, err = run([]string{key}, args...)
	} else if reply, err = run([]string{key, name}, append(args[:len(args):len(args)], value, ttl)...); err != nil {
		reply, err = l.recordFailed(name, err, func() (any, error) { return run([]string{key}, args...) })
	}
	if err != nil {
		return nil, err
	}
	r := kernel.ReadReply(reply)
	results := make([]Result, calls)
	if p.limit.Algorithm == FixedWindow {
		r.Want(r.Len() == 2 && decodeWindowBatch(results, p, n, r.Status(), r.Int(0), r.Int(1)))
	} else {
		r.Want(r.Len() == 3 && decodeGCRABatch(results, p, n, r.Status(), [3]int64{r.Int(0), r.Int(1), r.Int(2)}))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// decodeGCRABatch fills results, one per call of n events on a GCRA limit
// of params p, from allow_gcra_batch.lua's reply: admitted, and v, the
// lead over now before the first call as decodeRule takes it. It reports
// whether the reply has a form the script answers. Each call gets the
// answer allow_gcra.lua would have given it, made in turn: the first
// admitted calls are allowed, each leaving the lead one share further,
// and the rest are refused at the lead the last allowed one left.
func decodeGCRABatch(results []Result, p params, n int64, admitted int64, v [3]int64) bool {
	if admitted < 0 || admitted > int64(len(results)) || admitted > 0 && n > p.limit.Burst ||
		v[0] < 0 || v[1] < 0 || uint64(v[1]) >= p.den || uint64(v[2]) != p.den {
		return false
	}
	lead, share := span{uint64(v[0]), uint64(v[1])}, span{}
	if admitted > 0 {
		share = p.share(n)
	}
	for i := range results {
		allowed := int64(0)
		if int64(i) < admitted {
			allowed = 1
			lead = p.add(lead, share)
			if p.tau.less(lead) {
				return false // allowed, yet past tau
			}
		}
		results[i].Limit = p.limit
		if !decodeRule(&results[i], p, n, allowed, [3]int64{int64(lead.us), int64(lead.rem), v[2]}) {
			return false
		}
	}
	return true
}

// decodeWindowBatch fills results, one per call of n events on a
// FixedWindow limit of params p, from allow_window_batch.lua's reply:
// admitted, left (the rate less the count before the first call) and ttl
// (the window's PTTL in ms, -2 for none). It reports whether the reply
// has a form the script answers. Each call gets the answer
// allow_window.lua would have given it, made in turn: the first admitted
// calls are allowed, each leaving n fewer remaining, and the rest are
// refused at what the last allowed one left, to wait for the window's end
// (for ever when n is above the rate).
func decodeWindowBatch(results []Result, p params, n int64, admitted, left, ttl int64) bool {
	if admitted < 0 || admitted > int64(len(results)) || ttl < -2 || ttl == -1 ||
		admitted > 0 && (n > p.rate || left < admitted*n) ||
		admitted < int64(len(results)) && n <= left-admitted*n {
		return false
	}
	reset := max(ttl, 0) * 1000
	for i := range results {
		res := Result{Limit: p.limit, ResetAfter: micros(reset)}
		if int64(i) < admitted {
			res.Allowed = true
			res.Remaining = left - int64(i+1)*n
		} else {
			res.Remaining = max(left-admitted*n, 0)
			res.RetryAfter = micros(max(ttl, 1) * 1000)
			if n > p.rate {
				res.RetryAfter = Never
			}
		}
		results[i] = res
	}
	return true
}

// gcraArgs returns what allow_gcra.lua, allow_gcra_batch.lua and
// allow_all.lua take of a GCRA limit and n: the n events' share of a
// period, and tau. For an n above Burst, which never fits, the share is
// tau's whole µs and 1µs more, which is more than tau.
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

// inspect runs inspect.lua, which writes nothing, on the client. KEYS:
// the limit's data key. ARGV: one rule of allow_all.lua, by
// allowAllArgs, with n 0. Reply: {allowed, then the three numbers of
// allow's reply}, decoded by decodeRule.
func (l *Limiter) inspect(ctx context.Context, key string, p params) (Result, error) {
	reply, err := inspectScript.Run(ctx, l.base.Client, []string{key}, allowAllArgs(nil, p, 0)...).Result()
	if err != nil {
		return Result{}, err
	}
	r := kernel.ReadReply(reply)
	res := Result{Limit: p.limit}
	r.Want(r.Len() == ruleLen-1 && decodeRule(&res, p, 0, r.Status(), [3]int64{r.Int(0), r.Int(1), r.Int(2)}))
	if err := r.Err(); err != nil {
		return Result{}, err
	}
	return res, nil
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
