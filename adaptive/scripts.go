package adaptive

import (
	"context"
	"embed"
	"math"
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
//
// acquire.lua and release.lua take one or more holders, and answer each in
// turn: concurrent tries, and concurrent releases, made through one
// Limiter go to Redis as one run (a coalesce.Group per kind, one key and
// one config each), unless Config.DisableCoalescing is set, which makes
// each Group send every call alone. A lone call is a run of one.

//go:embed scripts
var scriptFiles embed.FS

// maxRun is the most holders a shared run carries, so that no run holds
// the server for long: a run of 32 tries, each joining the queue, takes
// about 0.25 ms of the server's time, and one of 32 releases, each handing
// its slot to a waiter, about 0.35 ms; tries that take a slot, and
// releases that hand nothing on, cost a fraction of that.
const maxRun = 32

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

// tuningArg is ARGV 'window step factor[ tolerance]' of release.lua: the
// tolerance, in thousandths, only when Config.RTTTolerance is set, so
// that a Limiter without it sends what it always sent.
func tuningArg(c Config) string {
	s := strconv.FormatInt(c.Window.Milliseconds(), 10) + " " + strconv.FormatInt(c.Step, 10) + " " +
		strconv.FormatFloat(c.Factor, 'f', -1, 64)
	if c.RTTTolerance != 0 {
		s += " " + strconv.FormatInt(int64(math.Round(c.RTTTolerance*1000)), 10)
	}
	return s
}

// acquire.lua: KEYS state, leases, queue, queue deadlines, queue wants;
// ARGV bounds, lease time ms, queue entry lease ms, then for each try its
// holder and join ('1' or '0').
var acquireScript = script.Load(scriptFiles, "scripts/acquire.lua", waitqueue.Lib)

// A try is one holder's try in a run of acquire.lua.
type try struct {
	holder string
	join   bool // queue the holder when refused
}

// joinArgs are ARGV join, boxed once: join false, then true.
var joinArgs = [2]any{"0", "1"}

// A grant is one holder's reply of acquire.lua.
type grant struct {
	held     bool          // the holder holds a slot
	deadline int64         // held: its lease's deadline, ms
	inUse    int64         // slots in use after the call
	limit    int64         // the shared limit
	now      int64         // the server's clock, ms; held: when the slot was granted, 0 when unknown
	try      waitqueue.Try // what a waiter's try reports
}

// acquire runs acquire.lua for s's holder; join queues it when refused.
// Before it, at most once a minute, it records the Limiter's bounds.
// Unless Config.DisableCoalescing is set, concurrent tries share a run;
// a try whose ctx ended while its run was in flight is remembered in
// l.unsettled, so that s leaves after that run.
func (l *Limiter) acquire(ctx context.Context, s *Slot, join bool) (grant, error) {
	l.recordBounds(ctx)
	g, err := l.tries.Do(ctx, struct{}{}, try{holder: s.id, join: join})
	l.unsettled.Note(s.id, err)
	return g, err
}

// sendTries is the Send of l.tries.
func (l *Limiter) sendTries(ctx context.Context, _ struct{}, tries []try) ([]grant, error) {
	return l.runTries(ctx, tries)
}

// runTries runs acquire.lua for tries, in arrival order.
func (l *Limiter) runTries(ctx context.Context, tries []try) ([]grant, error) {
	args := make([]any, 0, 3+2*len(tries))
	args = append(args, l.bounds, l.ttl, waitqueue.EntryTTLArg)
	for _, t := range tries {
		join := joinArgs[0]
		if t.join {
			join = joinArgs[1]
		}
		args = append(args, t.holder, join)
	}
	v, err := l.base.Runner.Run(ctx, acquireScript, l.queueKeys(), args...).Result()
	if err != nil {
		return nil, err
	}
	return readEach(v, len(tries), readGrant)
}

// readGrant reads one holder's reply of acquire.lua.
func readGrant(r *kernel.Reply) grant {
	switch {
	case r.Status() == 1 && r.Len() == 4: // {1, deadline, in use, limit, granted}
		return grant{held: true, deadline: r.Int(0), inUse: r.Int(1), limit: r.Int(2), now: r.Int(3), try: waitqueue.Try{Done: true}}
	case r.Status() == 0 && r.Len() == 5: // {0, lapse ms, in use, limit, now, arrival}
		return grant{inUse: r.Int(1), limit: r.Int(2), now: r.Int(3), try: waitqueue.Try{
			Arrival: r.Int(4), Lapse: time.Duration(r.Int(0)) * time.Millisecond, Clock: time.UnixMilli(r.Int(3)),
		}}
	}
	r.Want(false)
	return grant{}
}

// release.lua: KEYS state, leases, queue, queue deadlines, queue wants;
// ARGV bounds, tuning, hand-off, then for each release its holder,
// outcome, granted ms and known deadline ms.
var releaseScript = script.Load(scriptFiles, "scripts/release.lua", waitqueue.Lib)

// A release is one holder's release in a run of release.lua: outcome, and
// the slot's grant and lease deadline, in ms (0: unknown).
type release struct {
	holder, outcome string
	granted, known  int64
}

// A freed is one holder's reply of release.lua.
type freed struct {
	held          bool  // the holder held a live lease, now freed
	before, after int64 // the limit before and after the call
	inUse         int64 // slots in use after the call

	// With Config.RTTTolerance, the latency estimate after the call; 0
	// when none is known.
	latency, noLoad time.Duration
}

// release runs release.lua for r. Unless Config.DisableCoalescing is set,
// concurrent releases share a run.
func (l *Limiter) release(ctx context.Context, r release) (freed, error) {
	return l.releases.Do(ctx, struct{}{}, r)
}

// sendReleases is the Send of l.releases: one run of release.lua for
// releases, in arrival order.
func (l *Limiter) sendReleases(ctx context.Context, _ struct{}, releases []release) ([]freed, error) {
	return l.runReleases(ctx, &l.base.Runner, releases)
}

// runReleases runs release.lua for releases, in order, in one script
// call through run.
func (l *Limiter) runReleases(ctx context.Context, run *script.Runner, releases []release) ([]freed, error) {
	args := make([]any, 0, 3+4*len(releases))
	args = append(args, l.bounds, l.tuning, l.handOff)
	for _, r := range releases {
		args = append(args, r.holder, r.outcome, r.granted, r.known)
	}
	v, err := run.Run(ctx, releaseScript, l.queueKeys(), args...).Result()
	if err != nil {
		return nil, err
	}
	return readEach(v, len(releases), readFreed)
}

// readFreed reads one holder's reply of release.lua: {held, limit
// before, limit after, in use}, then, with a tolerance, {recent latency
// us, no-load latency ms}.
func readFreed(r *kernel.Reply) freed {
	r.Want((r.Len() == 3 || r.Len() == 5) && (r.Status() == 0 || r.Status() == 1))
	f := freed{held: r.Status() == 1, before: r.Int(0), after: r.Int(1), inUse: r.Int(2)}
	if r.Len() == 5 {
		f.latency, f.noLoad = time.Duration(r.Int(3))*time.Microsecond, time.Duration(r.Int(4))*time.Millisecond
	}
	return f
}

// readEach reads the reply {1, then n replies, one per holder} of
// acquire.lua or release.lua, each with read.
func readEach[T any](v any, n int, read func(*kernel.Reply) T) ([]T, error) {
	r := kernel.ReadReply(v)
	r.Want(r.Status() == 1 && r.Len() == n)
	if err := r.Err(); err != nil {
		return nil, err
	}
	out := make([]T, n)
	for i, f := range r.Fields() {
		m := kernel.ReadReply(f)
		out[i] = read(&m)
		if err := m.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
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
// down, up, drop delay, waiters, recent latency us, no-load latency ms,
// then pairs holder, deadline}.
func (l *Limiter) inspect(ctx context.Context) (Info, error) {
	v, err := inspectScript.Run(ctx, l.base.Client, l.inspectKeys(), l.bounds).Result()
	if err != nil {
		return Info{}, err
	}
	const head = 9
	r := kernel.ReadReply(v)
	r.Want(r.Status() == 1 && r.Len() >= head && (r.Len()-head)%2 == 0)
	info := Info{
		ServerTime: time.UnixMilli(r.Int(0)),
		Limit:      r.Int(1),
		Stored:     r.Int(2) == 1,
		DropDelay:  time.Duration(r.Int(5)) * time.Millisecond,
		Waiters:    r.Int(6),

		Latency:       time.Duration(r.Int(7)) * time.Microsecond,
		NoLoadLatency: time.Duration(r.Int(8)) * time.Millisecond,
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
