package slotlimit

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script. A script.Script runs it with
// EVALSHA and falls back to EVAL when the server answers NOSCRIPT, which
// also caches the script again, so a SCRIPT FLUSH or a restarted server
// needs no care here. Scripts that write run through slots.runner, so
// that Config.Replicas acknowledge them.
var (
	//go:embed scripts/lib.lua
	libLua string
	// leaseLib is lib.lua, the helpers of the lease scripts. A lease script
	// holds its include line where it first needs them, so that a call
	// that returns before that line does not pay for defining them.
	leaseLib = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/acquire.lua
	acquireLua    string
	acquireScript = script.New(acquireLua, leaseLib)

	//go:embed scripts/release.lua
	releaseLua    string
	releaseScript = script.New(releaseLua, leaseLib, waitqueue.Lib)

	//go:embed scripts/acquire_queued.lua
	acquireQueuedLua    string
	acquireQueuedScript = script.New(acquireQueuedLua, leaseLib, waitqueue.Lib)

	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua, leaseLib)

	//go:embed scripts/renew.lua
	renewLua    string
	renewScript = script.New(renewLua, leaseLib)

	//go:embed scripts/count.lua
	countLua    string
	countScript = script.New(countLua, leaseLib)

	//go:embed scripts/holders.lua
	holdersLua    string
	holdersScript = script.New(holdersLua, leaseLib)

	//go:embed scripts/counter_acquire.lua
	counterAcquireLua    string
	counterAcquireScript = script.New(counterAcquireLua)

	//go:embed scripts/counter_release.lua
	counterReleaseLua    string
	counterReleaseScript = script.New(counterReleaseLua)
)

// formatMillis formats d in whole milliseconds, as the scripts take times.
func formatMillis(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// The scripts that read a Limiter's key for operators (inspect.go). They
// write nothing, so they run on the client, not through slots.runner.
var (
	//go:embed scripts/inspect.lua
	inspectLua    string
	inspectScript = script.New(inspectLua, leaseLib, waitqueue.Lib)
)

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

// releaseArgs returns the arguments of a release.lua call for holders
// whose deadlines the caller does not know.
func (l *Limiter) releaseArgs(holders ...string) []any {
	args := make([]any, 0, 2+len(holders))
	args = append(args, l.releaseFixed, "0")
	for _, holder := range holders {
		args = append(args, holder)
	}
	return args
}

// releaseHeldArgs returns the arguments of a release.lua call for one
// holder whose lease the server gave deadline (ms on its clock; 0 when
// unknown).
func (l *Limiter) releaseHeldArgs(holder string, deadline int64) []any {
	var known any = "0"
	if deadline > 0 {
		known = strconv.FormatInt(deadline, 10)
	}
	return []any{l.releaseFixed, known, holder}
}

func weightArg(n int64) any {
	if n == 1 {
		return "1"
	}
	return strconv.FormatInt(n, 10)
}

// decodeAcquire appends to results the outcome of each of want holders in
// reply, the reply of call: of acquire.lua (stride 3: u, x, w) or of
// acquire_queued.lua (stride 4: u, x, w, arrival, then the server's clock
// when the call joins the queue); see the scripts' headers. It returns the
// last holder's try: whether it was granted, its queue entry, when the
// earliest lease lapses and the server's clock, as the script gave them.
// A number below zero is acquire.lua's refusal of one holder by the full
// marker, and a number above zero its grant of a new lease of one unit to
// one holder: u << grantShift | x.
func (l *Limiter) decodeAcquire(results []Result, reply any, call acquireCall, want int) ([]Result, waitqueue.Try, error) {
	if ms, ok := reply.(int64); ok && ms < 0 && want == 1 {
		res := Result{Limit: l.cfg.Limit, Count: l.cfg.Limit, EarliestLapse: time.Duration(-ms) * time.Millisecond}
		return append(results, res), waitqueue.Try{Lapse: res.EarliestLapse}, nil
	}
	if v, ok := reply.(int64); ok && v > 0 && want == 1 && call.stride == 3 {
		units, deadline := v>>grantShift, v&(1<<grantShift-1)
		if units < 1 {
			return results, waitqueue.Try{}, callerr.UnexpectedReply(reply)
		}
		res := l.outcome(units, deadline, 1)
		return append(results, res), waitqueue.Try{Done: true}, nil
	}
	tail := 0
	if call.clock {
		tail = 1
	}
	r, ok := reply.([]any)
	if !ok || len(r) != want*call.stride+tail {
		return results, waitqueue.Try{}, callerr.UnexpectedReply(reply)
	}
	var try waitqueue.Try
	for i := 0; i < want*call.stride; i += call.stride {
		var v [4]int64
		if !int64s(v[:call.stride], r[i:i+call.stride]) {
			return results, waitqueue.Try{}, callerr.UnexpectedReply(reply)
		}
		res := l.outcome(v[0], v[1], v[2])
		results = append(results, res)
		try = waitqueue.Try{Done: res.Acquired, Arrival: v[3], Lapse: res.EarliestLapse}
	}
	if tail == 1 {
		now, ok := r[len(r)-1].(int64)
		if !ok {
			return results, waitqueue.Try{}, callerr.UnexpectedReply(reply)
		}
		try.Clock = time.UnixMilli(now)
	}
	return results, try, nil
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
// join says whether a refused holder joins the queue (one holder only).
func (l *Limiter) acquireCall(n int64, join bool, holders ...string) acquireCall {
	if join || l.cfg.Fair {
		return acquireCall{acquireQueuedScript, l.queuedKeys, l.acquireQueuedArgs(n, join, holders...), 4, join}
	}
	return acquireCall{acquireScript, l.acquireKeys, l.acquireArgs(n, holders...), 3, false}
}

// readKeys are the keys of count.lua, holders.lua and claim.lua: the
// leases and the weights.
func (l *Limiter) readKeys() []string { return l.keys[keyLeases:keyFull] }

// runRenew runs renew.lua (KEYS leaseKeys; ARGV holder, lease ms): it
// returns the lease's new deadline on the server's clock (ms), and false
// when holder held no live lease.
func (l *Limiter) runRenew(ctx context.Context, holder string) (int64, bool, error) {
	reply, err := l.runner.Run(ctx, renewScript, l.leaseKeys(), holder, l.ttl).Slice()
	if err != nil {
		return 0, false, callError(ctx, "renew", l.cfg.Key, err)
	}
	return decodeHeldUntil("renew", l.cfg.Key, reply)
}

// runClaim runs claim.lua (KEYS readKeys; ARGV holder, the deadline ms
// the notice stated): it returns the lease's deadline, and false when
// holder held no live lease.
func (l *Limiter) runClaim(ctx context.Context, holder string, deadline time.Time) (int64, bool, error) {
	reply, err := l.runner.Run(ctx, claimScript, l.readKeys(), holder, deadline.UnixMilli()).Slice()
	if err != nil {
		return 0, false, callError(ctx, "claim", l.cfg.Key, err)
	}
	return decodeHeldUntil("claim", l.cfg.Key, reply)
}

// decodeHeldUntil reads the reply of renew.lua and claim.lua: {1,
// deadline ms} when the holder held a live lease, else {0}.
func decodeHeldUntil(op, key string, reply []any) (int64, bool, error) {
	switch {
	case len(reply) == 1 && reply[0] == int64(0):
		return 0, false, nil
	case len(reply) == 2 && reply[0] == int64(1):
		if at, ok := reply[1].(int64); ok {
			return at, true, nil
		}
	}
	return 0, false, opError(op, key, callerr.UnexpectedReply(reply))
}

// runCount runs count.lua (KEYS readKeys; no ARGV), whose reply is {1,
// units in use}.
func (l *Limiter) runCount(ctx context.Context) (int64, error) {
	reply, err := countScript.Run(ctx, l.client, l.readKeys()).Slice()
	if err != nil {
		return 0, callError(ctx, "count", l.cfg.Key, err)
	}
	if len(reply) == 2 && reply[0] == int64(1) {
		if n, ok := reply[1].(int64); ok {
			return n, nil
		}
	}
	return 0, opError("count", l.cfg.Key, callerr.UnexpectedReply(reply))
}

// runHolders runs holders.lua (KEYS readKeys; no ARGV), whose reply is
// {1, then a triple per live lease: holder, deadline ms, weight}.
func (l *Limiter) runHolders(ctx context.Context) ([]Holder, error) {
	reply, err := holdersScript.Run(ctx, l.client, l.readKeys()).Slice()
	if err != nil {
		return nil, callError(ctx, "holders", l.cfg.Key, err)
	}
	holders, ok := decodeHolders(reply)
	if !ok {
		return nil, opError("holders", l.cfg.Key, callerr.UnexpectedReply(reply))
	}
	return holders, nil
}

// decodeHolders reads the reply of holders.lua.
func decodeHolders(reply []any) ([]Holder, bool) {
	if len(reply) == 0 || reply[0] != int64(1) || (len(reply)-1)%3 != 0 {
		return nil, false
	}
	holders := make([]Holder, 0, (len(reply)-1)/3)
	for i := 1; i < len(reply); i += 3 {
		id, ok1 := reply[i].(string)
		at, ok2 := reply[i+1].(string)
		w, ok3 := reply[i+2].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		ms, err := strconv.ParseFloat(at, 64)
		if err != nil {
			return nil, false
		}
		weight, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return nil, false
		}
		holders = append(holders, Holder{ID: id, ExpiresAt: time.UnixMilli(int64(ms)), Weight: weight})
	}
	return holders, true
}

// runInspect runs inspect.lua (KEYS leases, weights, queue, queue
// deadlines, queue wants; no ARGV), whose reply is the status 1, then
// the strings decodeSnapshot reads.
func (l *Limiter) runInspect(ctx context.Context) (Snapshot, error) {
	keys := []string{l.keys[keyLeases], l.keys[keyWeights], l.keys[keyQueue], l.keys[keyQueueDeadlines], l.keys[keyQueueWants]}
	reply, err := inspectScript.Run(ctx, l.client, keys).Slice()
	if err != nil {
		return Snapshot{}, callError(ctx, "inspect", l.cfg.Key, err)
	}
	if len(reply) > 0 && reply[0] == int64(1) {
		rest := make([]string, len(reply)-1)
		ok := true
		for i, v := range reply[1:] {
			rest[i], ok = v.(string)
			if !ok {
				break
			}
		}
		if snap, decoded := decodeSnapshot(rest); ok && decoded {
			return snap, nil
		}
	}
	return Snapshot{}, opError("inspect", l.cfg.Key, callerr.UnexpectedReply(reply))
}

// runAcquire runs counter_acquire.lua (KEYS the counter; ARGV limit,
// lease ms), whose reply is {acquired 0|1, count, ms}: the key's new
// expiry when acquired, its remaining TTL (-1: none) when refused.
func (c *Counter) runAcquire(ctx context.Context) (Result, error) {
	reply, err := c.runner.Run(ctx, counterAcquireScript, c.keys, c.limit, c.ttl).Int64Slice()
	if err != nil {
		return Result{Limit: c.cfg.Limit}, callError(ctx, "acquire", c.cfg.Key, err)
	}
	if len(reply) != 3 || (reply[0] != 0 && reply[0] != 1) {
		return Result{Limit: c.cfg.Limit}, opError("acquire", c.cfg.Key, callerr.UnexpectedReply(reply))
	}
	res := Result{Acquired: reply[0] == 1, Count: reply[1], Limit: c.cfg.Limit}
	if res.Acquired {
		res.Weight = 1
		res.ExpiresAt = time.UnixMilli(reply[2])
	} else {
		res.EarliestLapse = time.Duration(max(reply[2], 0)) * time.Millisecond
	}
	return res, nil
}

// runRelease runs counter_release.lua (KEYS the counter, a new record of
// this call beside it; ARGV the record's lifetime, ms), whose reply is the
// status alone: 1 when it gave a unit back, else 0.
func (c *Counter) runRelease(ctx context.Context) (bool, error) {
	keys := []string{c.cfg.Key, c.records + rand.Text()}
	n, err := c.runner.Run(ctx, counterReleaseScript, keys, releaseRecordMillis).Int64()
	if err != nil {
		return false, callError(ctx, "release", c.cfg.Key, err)
	}
	if n != 0 && n != 1 {
		return false, opError("release", c.cfg.Key, callerr.UnexpectedReply(n))
	}
	return n == 1, nil
}
