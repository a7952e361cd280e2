package slotlimit

import (
	"context"
	"crypto/rand"
	"embed"
	"fmt"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script in scripts/, whose lease scripts
// include lib.lua, their helpers, where they first need them, so that a
// call that returns before that line does not pay for defining them.
// Scripts that write run through slots.Runner, so that Config.Replicas
// acknowledge them; those that only read run on the client.
//
//go:embed scripts
var scriptFiles embed.FS

var (
	acquireScript        = script.Load(scriptFiles, "scripts/acquire.lua")
	acquireQueuedScript  = script.Load(scriptFiles, "scripts/acquire_queued.lua", waitqueue.Lib)
	releaseScript        = script.Load(scriptFiles, "scripts/release.lua", waitqueue.Lib)
	claimScript          = script.Load(scriptFiles, "scripts/claim.lua")
	renewScript          = script.Load(scriptFiles, "scripts/renew.lua")
	countScript          = script.Load(scriptFiles, "scripts/count.lua")
	holdersScript        = script.Load(scriptFiles, "scripts/holders.lua")
	inspectScript        = script.Load(scriptFiles, "scripts/inspect.lua", waitqueue.Lib)
	counterAcquireScript = script.Load(scriptFiles, "scripts/counter_acquire.lua")
	counterReleaseScript = script.Load(scriptFiles, "scripts/counter_release.lua")
)

// formatMillis formats d in whole milliseconds, as the scripts take times.
func formatMillis(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// This file is the Go side of each lease script's contract: the keys it
// takes, the arguments it is called with, and the one decoder of its
// reply. The Lua side is the header of each file in scripts/.

// The keys of a Limiter, in the order the scripts take them.
const (
	keyLeases         = iota // sorted set, holder -> lease deadline
	keyWeights               // hash, holder -> weight; '' -> extra units
	keyFull                  // the full marker of this Limiter's limit
	keyQueue                 // sorted set, waiting holder -> arrival number
	keyQueueDeadlines        // sorted set, waiting holder -> when its entry lapses
	keyQueueWants            // hash, waiting holder -> 'n:lease ms:limit'
	numKeys
)

// leaseKeys are the keys of the scripts that do not touch the queue:
// acquire, claim and renew. count and holders take the first two.
func (l *Limiter) leaseKeys() []string { return l.keys[:keyQueue] }

// acquireArgs returns the arguments of an acquire.lua call for holders.
func (l *Limiter) acquireArgs(n int64, holders ...string) []any {
	args := make([]any, 0, 3+len(holders))
	args = append(args, l.limit, l.ttl, weightArg(n))
	for _, holder := range holders {
		args = append(args, holder)
	}
	return args
}

// acquireQueuedArgs returns the arguments of an acquire_queued.lua call
// for holders; join says whether a refused holder joins the queue.
func (l *Limiter) acquireQueuedArgs(n int64, join bool, holders ...string) []any {
	var joinArg any = "0"
	if join {
		joinArg = "1"
	}
	args := make([]any, 0, 6+len(holders))
	args = append(args, l.limit, l.ttl, weightArg(n), l.fair, joinArg, waitqueue.EntryTTLArg)
	for _, holder := range holders {
		args = append(args, holder)
	}
	return args
}

// releaseFixedArg returns release.lua's first argument: the limit, fair
// mode, the claim time, the notice command and the notice channel, joined
// by ':' in that order, the channel last since it may hold ':'.
func (l *Limiter) releaseFixedArg() string {
	return fmt.Sprintf("%v:%v:%v:%v:%v", l.limit, l.fair, waitqueue.EntryTTLArg, l.notify, l.channelArg)
}

// A releaseReq is one holder's release: the deadline the server gave its
// lease (ms on its clock; 0 when the caller does not know it).
type releaseReq struct {
	holder   string
	deadline int64
}

// releaseArgs returns the arguments of a release.lua call for holders
// whose deadlines the caller does not know.
func (l *Limiter) releaseArgs(holders ...string) []any {
	args := make([]any, 0, 1+2*len(holders))
	args = append(args, l.releaseFixed)
	for _, holder := range holders {
		args = append(args, "0", holder)
	}
	return args
}

// releaseHeldArgs returns the arguments of a release.lua call for reqs.
func (l *Limiter) releaseHeldArgs(reqs []releaseReq) []any {
	args := make([]any, 0, 1+2*len(reqs))
	args = append(args, l.releaseFixed)
	for _, r := range reqs {
		var known any = "0"
		if r.deadline > 0 {
			known = strconv.FormatInt(r.deadline, 10)
		}
		args = append(args, known, r.holder)
	}
	return args
}

func weightArg(n int64) any {
	if n == 1 {
		return "1"
	}
	return strconv.FormatInt(n, 10)
}

// An attempt is one holder's outcome in an acquire script's reply: its
// Result, and its try as a waiting caller reads it.
type attempt struct {
	res Result
	try waitqueue.Try
}

// decodeAcquire appends to out the outcome of each of want holders in
// reply, the reply of call: of acquire.lua (stride 3: u, x, w) or of
// acquire_queued.lua (stride 4: u, x, w, arrival, then the server's clock
// when the call joins the queue); see the scripts' headers. Each holder's
// try says whether it was granted, its queue entry, when the earliest
// lease lapses and the server's clock, as the script gave them.
// A number below zero is acquire.lua's refusal of one holder by the full
// marker, and a number above zero its grant of a new lease of one unit to
// one holder: u << grantShift | x.
func (l *Limiter) decodeAcquire(out []attempt, reply any, call acquireCall, want int) ([]attempt, error) {
	if ms, ok := reply.(int64); ok && ms < 0 && want == 1 {
		res := Result{Limit: l.cfg.Limit, Count: l.cfg.Limit, EarliestLapse: time.Duration(-ms) * time.Millisecond}
		return append(out, attempt{res, waitqueue.Try{Lapse: res.EarliestLapse}}), nil
	}
	if v, ok := reply.(int64); ok && v > 0 && want == 1 && call.stride == 3 {
		units, deadline := v>>grantShift, v&(1<<grantShift-1)
		if units < 1 {
			return out, callerr.UnexpectedReply(reply)
		}
		return append(out, attempt{l.outcome(units, deadline, 1), waitqueue.Try{Done: true}}), nil
	}
	tail := 0
	if call.clock {
		tail = 1
	}
	r, ok := reply.([]any)
	if !ok || len(r) != want*call.stride+tail {
		return out, callerr.UnexpectedReply(reply)
	}
	var clock time.Time
	if tail == 1 {
		now, ok := r[len(r)-1].(int64)
		if !ok {
			return out, callerr.UnexpectedReply(reply)
		}
		clock = time.UnixMilli(now)
	}
	for i := 0; i < want*call.stride; i += call.stride {
		var v [4]int64
		if !int64s(v[:call.stride], r[i:i+call.stride]) {
			return out, callerr.UnexpectedReply(reply)
		}
		res := l.outcome(v[0], v[1], v[2])
		out = append(out, attempt{res, waitqueue.Try{Done: res.Acquired, Arrival: v[3], Lapse: res.EarliestLapse, Clock: clock}})
	}
	return out, nil
}

// grantShift is the bits of the deadline in acquire.lua's reply to the
// commonest grant, a new lease of one unit: u * 2^42 + x, for u below 2^11
// and x below 2^42, so that the sum stays below 2^53, exact in Lua.
const grantShift = 42

// outcome reads one holder's u, x and w: u >= 1 granted, with u units in
// use and the lease lasting until x; u <= -1 refused, with -1 - u units
// in use and x the ms until the earliest lease lapses. w is the units
// held after the call.
func (l *Limiter) outcome(u, x, w int64) Result {
	res := Result{Limit: l.cfg.Limit, Weight: w}
	if u >= 1 {
		res.Acquired, res.Count, res.ExpiresAt = true, u, time.UnixMilli(x)
	} else {
		res.Count, res.EarliestLapse = -1-u, time.Duration(x)*time.Millisecond
	}
	return res
}

// decodeReleased appends to released the outcome of each holder in
// reply, the reply of release.lua: a character per holder, '1' when it
// held a live lease, else '0'.
func decodeReleased(released []bool, reply any) ([]bool, error) {
	r, ok := reply.(string)
	if !ok {
		return released, callerr.UnexpectedReply(reply)
	}
	for i := 0; i < len(r); i++ {
		switch r[i] {
		case '1':
			released = append(released, true)
		case '0':
			released = append(released, false)
		default:
			return released, callerr.UnexpectedReply(reply)
		}
	}
	return released, nil
}

// int64s copies reply's entries into v, which must be as long, and
// reports false if one is not an int64.
func int64s(v []int64, reply []any) bool {
	for i, x := range reply {
		n, ok := x.(int64)
		if !ok {
			return false
		}
		v[i] = n
	}
	return true
}

// An acquireCall is one call of an acquire script: acquire.lua for a
// TryAcquire outside fair mode, acquire_queued.lua for an acquire that
// waits or minds the queue. stride is the numbers per holder in its reply,
// and clock says whether the server's clock follows them.
type acquireCall struct {
	script *script.Script
	keys   []string
	args   []any
	stride int
	clock  bool
}

// acquireCall returns the call that acquires n units for holders in turn;
// join says whether a refused holder joins the queue.
func (l *Limiter) acquireCall(n int64, join bool, holders ...string) acquireCall {
	if join || l.cfg.Fair {
		return acquireCall{acquireQueuedScript, l.queuedKeys, l.acquireQueuedArgs(n, join, holders...), 4, join}
	}
	return acquireCall{acquireScript, l.acquireKeys, l.acquireArgs(n, holders...), 3, false}
}

// readKeys are the keys of count.lua, holders.lua and claim.lua: the
// leases and the weights.
func (l *Limiter) readKeys() []string { return l.keys[keyLeases:keyFull] }

// A tryKey is what the tries of one batch share: the units each wants,
// and whether a refused one joins the queue.
type tryKey struct {
	n    int64
	join bool
}

// sendTries runs acquire.lua, or acquire_queued.lua when k.join or in
// fair mode, once for holders in turn (see acquireCall), and returns each
// one's attempt.
func (l *Limiter) sendTries(ctx context.Context, k tryKey, holders []string) ([]attempt, error) {
	call := l.acquireCall(k.n, k.join, holders...)
	l.writeRecord(ctx)
	reply, err := l.base.Runner.Run(ctx, call.script, call.keys, call.args...).Result()
	if err != nil {
		return nil, err
	}
	return l.decodeAcquire(make([]attempt, 0, len(holders)), reply, call, len(holders))
}

// sendReleases runs release.lua once for reqs in turn (KEYS keys; ARGV
// see releaseHeldArgs), and reports for each whether its holder held a
// live lease.
func (l *Limiter) sendReleases(ctx context.Context, _ struct{}, reqs []releaseReq) ([]bool, error) {
	reply, err := l.base.Runner.Run(ctx, releaseScript, l.keys, l.releaseHeldArgs(reqs)...).Result()
	if err != nil {
		return nil, err
	}
	released, err := decodeReleased(make([]bool, 0, len(reqs)), reply)
	if err == nil && len(released) != len(reqs) {
		err = callerr.UnexpectedReply(reply)
	}
	return released, err
}

// sendRenewals runs renew.lua once for holders in turn (KEYS leaseKeys;
// ARGV lease ms, holders): it returns each lease's new deadline on the
// server's clock (ms), or 0 when its holder held no live lease.
func (l *Limiter) sendRenewals(ctx context.Context, _ struct{}, holders []string) ([]int64, error) {
	args := make([]any, 0, 1+len(holders))
	args = append(args, l.ttl)
	for _, holder := range holders {
		args = append(args, holder)
	}
	l.writeRecord(ctx)
	reply, err := l.base.Runner.Run(ctx, renewScript, l.leaseKeys(), args...).Result()
	if err != nil {
		return nil, err
	}
	r := kernel.ReadReply(reply)
	r.Want(r.Status() == 1 && r.Len() == len(holders))
	deadlines := make([]int64, r.Len())
	for i := range deadlines {
		deadlines[i] = r.Int(i)
	}
	return deadlines, r.Err()
}

// runClaim runs claim.lua (KEYS readKeys; ARGV holder, the deadline ms
// the notice stated), for a call of method: it returns the lease's
// deadline, and false when holder held no live lease.
func (l *Limiter) runClaim(ctx context.Context, method, holder string, deadline time.Time) (int64, bool, error) {
	l.writeRecord(ctx)
	reply, err := l.base.Runner.Run(ctx, claimScript, l.readKeys(), holder, deadline.UnixMilli()).Result()
	return l.heldUntil(ctx, method, reply, err)
}

// heldUntil reads the reply of renew.lua and claim.lua, or their error,
// for a call of method: {1, deadline ms} when the holder held a live
// lease, else {0}.
func (l *Limiter) heldUntil(ctx context.Context, method string, reply any, err error) (int64, bool, error) {
	if err != nil {
		return 0, false, errs.Call(ctx, method, l.cfg.Key, err)
	}
	r := kernel.ReadReply(reply)
	held := r.Status() == 1
	var at int64
	if held {
		at = r.Int(0)
	}
	r.Want(r.Len() == 1 && held || r.Len() == 0 && r.Status() == 0)
	if err := r.Err(); err != nil {
		return 0, false, errs.Op(method, l.cfg.Key, err)
	}
	return at, held, nil
}

// runCount runs count.lua (KEYS readKeys; no ARGV), whose reply is {1,
// units in use}.
func (l *Limiter) runCount(ctx context.Context) (int64, error) {
	reply, err := countScript.Run(ctx, l.base.Client, l.readKeys()).Result()
	if err != nil {
		return 0, errs.Call(ctx, "Count", l.cfg.Key, err)
	}
	r := kernel.ReadReply(reply)
	n := r.Int(0)
	r.Want(r.Status() == 1 && r.Len() == 1)
	if err := r.Err(); err != nil {
		return 0, errs.Op("Count", l.cfg.Key, err)
	}
	return n, nil
}

// runHolders runs holders.lua (KEYS readKeys; no ARGV), whose reply is
// {1, then a triple per live lease: holder, deadline ms, weight}.
func (l *Limiter) runHolders(ctx context.Context) ([]Holder, error) {
	reply, err := holdersScript.Run(ctx, l.base.Client, l.readKeys()).Result()
	if err != nil {
		return nil, errs.Call(ctx, "Holders", l.cfg.Key, err)
	}
	holders, err := decodeHolders(reply)
	if err != nil {
		return nil, errs.Op("Holders", l.cfg.Key, err)
	}
	return holders, nil
}

// decodeHolders reads the reply of holders.lua.
func decodeHolders(reply any) ([]Holder, error) {
	r := kernel.ReadReply(reply)
	r.Want(r.Status() == 1 && r.Len()%3 == 0)
	holders := make([]Holder, 0, r.Len()/3)
	for i := 0; i+2 < r.Len(); i += 3 {
		id, at, w := r.String(i), r.String(i+1), r.String(i+2)
		ms, err1 := strconv.ParseFloat(at, 64)
		weight, err2 := strconv.ParseInt(w, 10, 64)
		r.Want(err1 == nil && err2 == nil)
		holders = append(holders, Holder{ID: id, ExpiresAt: time.UnixMilli(int64(ms)), Weight: weight})
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return holders, nil
}

// runInspect runs inspect.lua (KEYS leases, weights, queue, queue
// deadlines, queue wants; no ARGV), whose reply is the status 1, then
// the strings decodeSnapshot reads.
func (l *Limiter) runInspect(ctx context.Context) (Snapshot, error) {
	keys := []string{l.keys[keyLeases], l.keys[keyWeights], l.keys[keyQueue], l.keys[keyQueueDeadlines], l.keys[keyQueueWants]}
	reply, err := inspectScript.Run(ctx, l.base.Client, keys).Result()
	if err != nil {
		return Snapshot{}, errs.Call(ctx, "Inspect", l.cfg.Key, err)
	}
	r := kernel.ReadReply(reply)
	r.Want(r.Status() == 1)
	fields := make([]string, r.Len())
	for i := range fields {
		fields[i] = r.String(i)
	}
	snap, ok := decodeSnapshot(fields)
	r.Want(ok)
	if err := r.Err(); err != nil {
		return Snapshot{}, errs.Op("Inspect", l.cfg.Key, err)
	}
	return snap, nil
}

// runAcquire runs counter_acquire.lua (KEYS the counter; ARGV limit,
// lease ms) for a call of method, whose reply is {acquired 0|1, count,
// ms}: the key's new expiry when acquired, its remaining TTL (-1: none)
// when refused.
func (c *Counter) runAcquire(ctx context.Context, method string) (Result, error) {
	c.writeRecord(ctx)
	reply, err := c.base.Runner.Run(ctx, counterAcquireScript, c.keys, c.limit, c.ttl).Result()
	if err != nil {
		return Result{Limit: c.cfg.Limit}, errs.Call(ctx, method, c.cfg.Key, err)
	}
	r := kernel.ReadReply(reply)
	res := Result{Acquired: r.Status() == 1, Count: r.Int(0), Limit: c.cfg.Limit}
	ms := r.Int(1)
	r.Want((r.Status() == 0 || r.Status() == 1) && r.Len() == 2)
	if err := r.Err(); err != nil {
		return Result{Limit: c.cfg.Limit}, errs.Op(method, c.cfg.Key, err)
	}
	if res.Acquired {
		res.Weight = 1
		res.ExpiresAt = time.UnixMilli(ms)
	} else {
		res.EarliestLapse = time.Duration(max(ms, 0)) * time.Millisecond
	}
	return res, nil
}

// runRelease runs counter_release.lua (KEYS the counter, a new record of
// this call beside it; ARGV the record's lifetime, ms), whose reply is the
// status alone: 1 when it gave a unit back, else 0.
func (c *Counter) runRelease(ctx context.Context) (bool, error) {
	keys := []string{c.cfg.Key, c.records + rand.Text()}
	n, err := c.base.Runner.Run(ctx, counterReleaseScript, keys, releaseRecordMillis).Int64()
	if err != nil {
		return false, errs.Call(ctx, "Release", c.cfg.Key, err)
	}
	if n != 0 && n != 1 {
		return false, errs.Op("Release", c.cfg.Key, callerr.UnexpectedReply(n))
	}
	return n == 1, nil
}
