package adaptive

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL
// when the server answers NOSCRIPT. This file is the Go side of each
// script's contract, one section per script: the keys it takes (in the
// order of the key constants in keys.go), its arguments and the one
// decoder of its reply; the Lua side is the header of each file in
// scripts/. Every reply begins with a status. Scripts that write run
// through a script.Runner: Limiter.runner, which waits for
// Config.Replicas, or one without WAIT for the cleanup of a failed call;
// inspect.lua, which writes nothing, runs on the client.

// lib.lua: the helpers every script but claim.lua includes.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}
)

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
var (
	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = script.New(acquireLua, lib, waitqueue.Lib)
)

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
	r, err := l.runner.Run(ctx, acquireScript, l.queueKeys(), holder, l.bounds, l.ttl, joinArg, waitqueue.EntryTTLArg).Int64Slice()
	if err != nil {
		return grant{}, err
	}
	switch {
	case len(r) == 5 && r[0] == 1: // {1, deadline, in use, limit, granted}
		return grant{held: true, deadline: r[1], inUse: r[2], limit: r[3], now: r[4], try: waitqueue.Try{Done: true}}, nil
	case len(r) == 6 && r[0] == 0: // {0, lapse ms, in use, limit, now, arrival}
		return grant{inUse: r[2], limit: r[3], now: r[4], try: waitqueue.Try{
			Arrival: r[5], Lapse: time.Duration(r[1]) * time.Millisecond, Clock: time.UnixMilli(r[4]),
		}}, nil
	}
	return grant{}, callerr.UnexpectedReply(r)
}

// release.lua: KEYS state, leases, queue, queue deadlines, queue wants;
// ARGV holder, outcome, bounds, tuning, granted ms, known deadline ms,
// hand-off.
var (
	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = script.New(releaseLua, lib, waitqueue.Lib)
)

// A freed is the reply of release.lua.
type freed struct {
	held          bool  // the holder held a live lease, now freed
	before, after int64 // the limit before and after the call
	inUse         int64 // slots in use after the call
}

// release runs release.lua for holder with outcome; granted and known
// are the slot's grant and lease deadline, in ms (0: unknown).
func (l *Limiter) release(ctx context.Context, holder, outcome string, granted, known int64) (freed, error) {
	return l.releaseOn(ctx, &l.runner, holder, outcome, granted, known)
}

// releaseOn is release, run through run.
func (l *Limiter) releaseOn(ctx context.Context, run *script.Runner, holder, outcome string, granted, known int64) (freed, error) {
	r, err := run.Run(ctx, releaseScript, l.queueKeys(), holder, outcome, l.bounds, l.tuning,
		granted, known, l.handOff).Int64Slice()
	if err != nil {
		return freed{}, err
	}
	if len(r) != 4 || (r[0] != 0 && r[0] != 1) {
		return freed{}, callerr.UnexpectedReply(r)
	}
	return freed{held: r[0] == 1, before: r[1], after: r[2], inUse: r[3]}, nil
}

// claim.lua: KEYS leases; ARGV holder, the deadline its notice stated, ms.
var (
	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua)
)

// claim runs claim.lua: holder takes the slot handed to it until
// deadline, and reports whether it holds it.
func (l *Limiter) claim(ctx context.Context, holder string, deadline time.Time) (bool, error) {
	status, err := l.runner.Run(ctx, claimScript, l.leaseKeys(), holder, deadline.UnixMilli()).Int64()
	switch {
	case err != nil:
		return false, err
	case status != 0 && status != 1:
		return false, callerr.UnexpectedReply(status)
	}
	return status == 1, nil
}

// inspect.lua: KEYS state, leases, queue deadlines; ARGV bounds. It
// writes nothing.
var (
	//go:embed scripts/inspect.lua
	inspectLua    string
	inspectScript = script.New(inspectLua, lib)
)

// inspect runs inspect.lua.
func (l *Limiter) inspect(ctx context.Context) (Info, error) {
	r, err := inspectScript.Run(ctx, l.client, l.inspectKeys(), l.bounds).StringSlice()
	if err != nil {
		return Info{}, err
	}
	info, ok := decodeInfo(r)
	if !ok {
		return Info{}, callerr.UnexpectedReply(r)
	}
	return info, nil
}

// decodeInfo reads the reply of inspect.lua: {now, limit, stored limit or
// ”, down, up, drop delay, waiters, then pairs {holder, deadline}}.
func decodeInfo(r []string) (Info, bool) {
	const head = 7
	if len(r) < head || (len(r)-head)%2 != 0 {
		return Info{}, false
	}
	var n [head]int64
	for i, s := range r[:head] {
		if i == 2 {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Info{}, false
		}
		n[i] = v
	}
	info := Info{
		ServerTime: time.UnixMilli(n[0]),
		Limit:      n[1],
		Stored:     r[2] != "",
		DropDelay:  time.Duration(n[5]) * time.Millisecond,
		Waiters:    n[6],
	}
	if n[3] > 0 {
		info.LastDecrease = time.UnixMilli(n[3])
	}
	if n[4] > 0 {
		info.LastIncrease = time.UnixMilli(n[4])
	}
	for i := head; i < len(r); i += 2 {
		deadline, err := strconv.ParseInt(r[i+1], 10, 64)
		if err != nil {
			return Info{}, false
		}
		info.Holders = append(info.Holders, Holder{ID: r[i], ExpiresAt: time.UnixMilli(deadline)})
	}
	info.InUse = int64(len(info.Holders))
	return info, true
}
