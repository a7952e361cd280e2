package adaptive

import (
	"context"
	"embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL
// when the server answers NOSCRIPT. This file is the Go side of each
// script's contract, one section per script: the keys it takes (in the
// order of the key constants in keys.go), its arguments and the one
// decoder of its reply; the Lua side is the header of each file in
// scripts/. Every reply begins with a status; claim.lua's is its status
// alone. Scripts that write run through a script.Runner: the Limiter's,
// which waits for Config.Replicas, or one without WAIT for the cleanup of
// a failed call; inspect.lua, which writes nothing, runs on the client.
// Every script but claim.lua includes lib.lua, the helpers beside it, at
// its "-- #include lib.lua" line.

//go:embed scripts
var scriptFiles embed.FS

// Each script's keys, in the order its KEYS take them.
func (l *Limiter) queueKeys() []string { return l.keys[keyState:numKeys] }        // acquire.lua, release.lua
func (l *Limiter) leaseKeys() []string { return l.keys[keyLeases : keyLeases+1] } // claim.lua
func (l *Limiter) inspectKeys() []string { // inspect.lua
	return []string{l.keys[keyState], l.keys[keyLeases], l.keys[keyQueueDeadlines]}
}

// handedBase packs the slots in use and the limit into the value of a
// hand-off's notice: in use × handedBase + limit (see release.lua).
const handedBase = 1 << 26

// unpackHanded reads the value of a hand-off's notice.
func unpackHanded(value int64) (inUse, limit int64) {
	return value / handedBase, value % handedBase
}

// The outcomes release.lua takes.
const (
	outcomeSuccess = "success"
	outcomeDropped = "dropped"
	outcomeIgnore  = "ignore"
)

// boundsArg is ARGV 'min max initial' of acquire.lua, release.lua and
// inspect.lua.
func boundsArg(c Config) string {
	return strconv.FormatInt(c.Min, 10) + " " + strconv.FormatInt(c.Max, 10) + " " + strconv.FormatInt(c.Initial, 10)
}

// tuningArg is ARGV 'window step factor' of release.lua.
func tuningArg(c Config) string {
	return strconv.FormatInt(c.Window.Milliseconds(), 10) + " " + strconv.FormatInt(c.Step, 10) + " " +
		strconv.FormatFloat(c.Factor, 'f', -1, 64)
}

// acquire.lua: KEYS state, leases, queue, queue deadlines, queue wants;
// ARGV holder, bounds, lease time ms, join ('1' or '0'), queue entry
// lease ms.
var acquireScript = script.Load(scriptFiles, "scripts/acquire.lua", waitqueue.Lib)

// A grant is the reply of acquire.lua.
type grant struct {
	held     bool          // the holder holds a slot
	deadline int64         // held: its lease's deadline, ms
	inUse    int64         // slots in use after the call
	limit    int64         // the shared limit
	now      int64         // the server's clock, ms; held: when the slot was granted, 0 when unknown
	try      waitqueue.Try // what a waiter's try reports
}

// acquire runs acquire.lua for holder; join queues it when refused.
func (l *Limiter) acquire(ctx context.Context, holder string, join bool) (grant, error) {
	joinArg := "0"
	if join {
		joinArg = "1"
	}
	v, err := l.base.Runner.Run(ctx, acquireScript, l.queueKeys(), holder, l.bounds, l.ttl, joinArg, waitqueue.EntryTTLArg).Result()
	if err != nil {
		return grant{}, err
	}
	r := kernel.ReadReply(v)
	var g grant
	switch {
	case r.Status() == 1 && r.Len() == 4: // {1, deadline, in use, limit, granted}
		g = grant{held: true, deadline: r.Int(0), inUse: r.Int(1), limit: r.Int(2), now: r.Int(3), try: waitqueue.Try{Done: true}}
	case r.Status() == 0 && r.Len() == 5: // {0, lapse ms, in use, limit, now, arrival}
		g = grant{inUse: r.Int(1), limit: r.Int(2), now: r.Int(3), try: waitqueue.Try{
			Arrival: r.Int(4), Lapse: time.Duration(r.Int(0)) * time.Millisecond, Clock: time.UnixMilli(r.Int(3)),
		}}
	default:
		r.Want(false)
	}
	if err := r.Err(); err != nil {
		return grant{}, err
	}
	return g, nil
}

// release.lua: KEYS state, leases, queue, queue deadlines, queue wants;
// ARGV holder, outcome, bounds, tuning, granted ms, known deadline ms,
// hand-off.
var releaseScript = script.Load(scriptFiles, "scripts/release.lua", waitqueue.Lib)

// A freed is the reply of release.lua.
type freed struct {
	held          bool  // the holder held a live lease, now freed
	before, after int64 // the limit before and after the call
	inUse         int64 // slots in use after the call
}

// release runs release.lua for holder with outcome; granted and known
// are the slot's grant and lease deadline, in ms (0: unknown).
func (l *Limiter) release(ctx context.Context, holder, outcome string, granted, known int64) (freed, error) {
	return l.releaseOn(ctx, &l.base.Runner, holder, outcome, granted, known)
}

// releaseOn is release, run through run.
func (l *Limiter) releaseOn(ctx context.Context, run *script.Runner, holder, outcome string, granted, known int64) (freed, error) {
	v, err := run.Run(ctx, releaseScript, l.queueKeys(), holder, outcome, l.bounds, l.tuning,
		granted, known, l.handOff).Result()
	if err != nil {
		return freed{}, err
	}
	r := kernel.ReadReply(v) // {held, limit before, limit after, in use}
	f := freed{held: r.Status() == 1, before: r.Int(0), after: r.Int(1), inUse: r.Int(2)}
	r.Want(r.Len() == 3 && (r.Status() == 0 || r.Status() == 1))
	if err := r.Err(); err != nil {
		return freed{}, err
	}
	return f, nil
}

// claim.lua: KEYS leases; ARGV holder, the deadline its notice stated, ms.
var claimScript = script.Load(scriptFiles, "scripts/claim.lua")

// claim runs claim.lua: holder takes the slot handed to it until
// deadline, and reports whether it holds it.
func (l *Limiter) claim(ctx context.Context, holder string, deadline time.Time) (bool, error) {
	return kernel.Held(l.base.Runner.Run(ctx, claimScript, l.leaseKeys(), holder, deadline.UnixMilli()).Int64())
}

// inspect.lua: KEYS state, leases, queue deadlines; ARGV bounds. It
// writes nothing.
var inspectScript = script.Load(scriptFiles, "scripts/inspect.lua")

// inspect runs inspect.lua, whose reply is {1, now, limit, stored,
// down, up, drop delay, waiters, then pairs holder, deadline}.
func (l *Limiter) inspect(ctx context.Context) (Info, error) {
	v, err := inspectScript.Run(ctx, l.base.Client, l.inspectKeys(), l.bounds).Result()
	if err != nil {
		return Info{}, err
	}
	const head = 7
	r := kernel.ReadReply(v)
	r.Want(r.Status() == 1 && r.Len() >= head && (r.Len()-head)%2 == 0)
	info := Info{
		ServerTime: time.UnixMilli(r.Int(0)),
		Limit:      r.Int(1),
		Stored:     r.Int(2) == 1,
		DropDelay:  time.Duration(r.Int(5)) * time.Millisecond,
		Waiters:    r.Int(6),
	}
	if down := r.Int(3); down > 0 {
		info.LastDecrease = time.UnixMilli(down)
	}
	if up := r.Int(4); up > 0 {
		info.LastIncrease = time.UnixMilli(up)
	}
	for i := head; i+1 < r.Len(); i += 2 {
		info.Holders = append(info.Holders, Holder{ID: r.String(i), ExpiresAt: time.UnixMilli(r.Int(i + 1))})
	}
	if err := r.Err(); err != nil {
		return Info{}, err
	}
	info.InUse = int64(len(info.Holders))
	return info, nil
}
