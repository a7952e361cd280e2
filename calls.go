package slotlimit

import (
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
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

// releaseArgs returns the arguments of a release.lua call for holders
// whose deadlines the caller does not know.
func (l *Limiter) releaseArgs(holders ...string) []any {
	args := make([]any, 0, 6+len(holders))
	args = append(args, l.limit, l.fair, l.channelArg, l.notify, waitqueue.EntryTTLArg, "0")
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
	return []any{l.limit, l.fair, l.channelArg, l.notify, waitqueue.EntryTTLArg, known, holder}
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
// marker.
func (l *Limiter) decodeAcquire(results []Result, reply any, call acquireCall, want int) ([]Result, waitqueue.Try, error) {
	if ms, ok := reply.(int64); ok && ms < 0 && want == 1 {
		res := Result{Limit: l.cfg.Limit, Count: l.cfg.Limit, EarliestLapse: time.Duration(-ms) * time.Millisecond}
		return append(results, res), waitqueue.Try{Lapse: res.EarliestLapse}, nil
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
