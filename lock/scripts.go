package lock

import (
	"context"
	"embed"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL
// when the server answers NOSCRIPT. Scripts that write run through a
// script.Runner, the Mutex's, so that Config.Replicas acknowledge them.
// A script's "-- #include x.lua" lines take the file x.lua beside it.
// This file is the Go side of each script's contract, one section per
// script: the keys it takes (in the order of the key constants in
// keys.go), its arguments and the one decoder of its reply; the Lua side
// is the header of each file in scripts/. Every reply begins with a
// status.
//
// TryLock needs no script: SET NX and TIME in one MULTI take the lock and
// read its fence (see obtain.go).

// waitMark follows an owner's token in the lock's value once someone
// waits for it: a waiter that queues behind an owner of this package puts
// it after the token (obtain_queued.lua), so that the owner's unlock
// checks the queue only then, and frees an unmarked lock as a bare
// compare-and-delete does (unlock.lua). Every script that compares the owner's token takes
// the token with or without it; Inspect reports the token without it.
const waitMark = "+"

//go:embed scripts
var scriptFiles embed.FS

// The statuses scripts reply with first.
const (
	statusNotHeld = 0 // the caller does not hold the lock (it is queued, for obtain_queued.lua)
	statusHeld    = 1 // the caller holds the lock, or held it and freed it
	statusWaiters = 2 // unlock.lua: the caller holds the lock, marked: someone may wait
)

// Each script's keys, in the order its KEYS take them: a prefix of the
// Mutex's keys, or the two inspect.lua reads.
func (m *Mutex) lockKeys() []string  { return m.base.Keys[keyLock : keyLock+1] }       // unlock.lua, refresh.lua, claim.lua
func (m *Mutex) queueKeys() []string { return m.base.Keys[keyLock : keyQueueWants+1] } // obtain_queued.lua, hand_off.lua
func (m *Mutex) inspectKeys() []string { // inspect.lua
	return []string{m.base.Keys[keyLock], m.base.Keys[keyQueueDeadlines]}
}

// noDeadline is the deadline argument of a caller that does not know its
// lease's deadline (see gone.lua).
const noDeadline = "0"

// deadlineArg is the deadline argument of hand_off.lua.
func deadlineArg(ms int64) any {
	if ms <= 0 {
		return noDeadline
	}
	return strconv.FormatInt(ms, 10)
}

// leaseFrom returns the deadline, in ms, that a lease of ttl taken or
// renewed by a script that read the server's clock as now (ms) lasts at
// least until. Redis sets the expiry by a clock it reads as the script or
// transaction starts, at most a moment before the script reads TIME, so a
// millisecond is taken off.
func leaseFrom(now int64, ttl time.Duration) int64 {
	return now + ttl.Milliseconds() - 1
}

// obtain_queued.lua: KEYS lock, queue, queue deadlines, queue wants, and
// the owner record when it is due; ARGV the owner's token, the lease time
// in ms, the queue entry's lease in ms, and with the owner record its
// value and expiry in ms. A call that Redis refused for the owner record
// before it ran (see owner.go) is sent again at once without it.
var obtainQueuedScript = script.Load(scriptFiles, "scripts/obtain_queued.lua", waitqueue.Lib)

// obtainQueued runs obtain_queued.lua for token and returns its reply: the
// fence when token holds the lock (0 otherwise), what a waiter's try
// reports otherwise, and the server's clock in ms.
func (m *Mutex) obtainQueued(ctx context.Context, token string) (fence int64, try waitqueue.Try, now int64, err error) {
	var v any
	owner := m.ownerDue()
	if owner {
		keys := append(m.queueKeys()[:numKeys:numKeys], m.ownerKey)
		v, err = m.base.Runner.Run(ctx, obtainQueuedScript, keys, token, m.ttl, waitqueue.EntryTTLArg, m.owner, m.ownerTTL).Result()
	}
	if !owner || err != nil && m.ownerFailed(err) {
		v, err = m.base.Runner.Run(ctx, obtainQueuedScript, m.queueKeys(), token, m.ttl, waitqueue.EntryTTLArg).Result()
	}
	if err != nil {
		return 0, try, 0, err
	}
	r := kernel.ReadReply(v)
	switch {
	case r.Status() == statusHeld && r.Len() == 2: // {1, fence, now}
		fence, now, try.Done = r.Int(0), r.Int(1), true
	case r.Status() == statusNotHeld && r.Len() == 3: // {0, ms until the holder's lease lapses, arrival, now}
		now = r.Int(2)
		try = waitqueue.Try{Lapse: time.Duration(r.Int(0)) * time.Millisecond, Arrival: r.Int(1), Clock: time.UnixMilli(now)}
	default:
		r.Want(false)
	}
	if err := r.Err(); err != nil {
		return 0, waitqueue.Try{}, 0, err
	}
	return fence, try, now, nil
}

// unlock.lua: KEYS lock; ARGV the owner's token. hand_off.lua: KEYS
// lock, queue, queue deadlines, queue wants; ARGV the caller's token,
// Mutex.handOff, the caller's lease deadline (deadlineArg).
// hand_off.lua includes gone.lua: its answer when the caller no longer
// holds the lock, which unlockRun gives unlock.lua's the same way
// (beforeDeadline).
var (
	unlockScript  = script.Load(scriptFiles, "scripts/unlock.lua")
	handOffScript = script.Load(scriptFiles, "scripts/hand_off.lua", waitqueue.Lib)
)

// unlockRun runs unlock.lua, and hand_off.lua when someone may wait, for
// token through run, with deadline the caller's lease deadline (0:
// unknown). It reports whether token held the lock: when unlock.lua finds
// it gone, beforeDeadline answers, as gone.lua does in hand_off.lua.
func (m *Mutex) unlockRun(ctx context.Context, run *script.Runner, token string, deadline int64) (bool, error) {
	status, err := run.Run(ctx, unlockScript, m.lockKeys(), token).Int64()
	switch {
	case err != nil:
		return false, err
	case status == statusWaiters:
		return kernel.Held(run.Run(ctx, handOffScript, m.queueKeys(), token, m.handOff, deadlineArg(deadline)).Int64())
	case status == statusNotHeld && deadline > 0:
		return m.beforeDeadline(ctx, deadline)
	}
	return kernel.Held(status, nil)
}

// beforeDeadline is the answer of an unlock that found the lock gone, as
// gone.lua gives it: true when the server's clock, read by TIME on the
// key's node after the unlock ran, is still before deadline (ms), the
// lease deadline the owner knows, so that only the owner's own unlock, a
// first run whose reply was lost, can have freed the lock. A clock read a
// round trip later than the script's own answers false in a little more
// of the edge that Lock.Unlock documents (a first run just before the
// deadline, sent again just after it).
func (m *Mutex) beforeDeadline(ctx context.Context, deadline int64) (bool, error) {
	var clock *redis.Cmd
	noWait := script.Runner{Client: m.base.Client}
	err := noWait.Tx(ctx, m.base.Key, func(do func(args ...any) *redis.Cmd) {
		clock = do("time")
	}, func() bool { return false })
	if err != nil {
		return false, err
	}
	reply, err := clock.Result()
	if err != nil {
		return false, err
	}
	now, err := microseconds(reply)
	if err != nil {
		return false, err
	}
	return now/1000 < deadline, nil
}

// leaveQueue runs hand_off.lua for token through run: a waiter that gives up
// leaves the queue, and hands on the lock if it was handed it.
func (m *Mutex) leaveQueue(ctx context.Context, run *script.Runner, token string) error {
	_, err := kernel.Held(run.Run(ctx, handOffScript, m.queueKeys(), token, m.handOff, noDeadline).Int64())
	return err
}

// refresh.lua: KEYS lock, and the owner record when it is due; ARGV the
// owner's token, the lease time in ms, and with the owner record its
// value and expiry in ms. A call that Redis refused for the owner record
// before it ran (see owner.go) is sent again at once without it.
var refreshScript = script.Load(scriptFiles, "scripts/refresh.lua")

// refreshRun runs refresh.lua for token, and returns the deadline its
// lease lasts at least until, in ms, or 0 when token does not hold the
// lock. A refresh writes the owner record when it is due, so that it
// outlives a lease that refreshes keep longer than the record's expiry.
func (m *Mutex) refreshRun(ctx context.Context, token string) (int64, error) {
	var v any
	var err error
	owner := m.ownerDue()
	if owner {
		keys := []string{m.base.Keys[keyLock], m.ownerKey}
		v, err = m.base.Runner.Run(ctx, refreshScript, keys, token, m.ttl, m.owner, m.ownerTTL).Result()
	}
	if !owner || err != nil && m.ownerFailed(err) {
		v, err = m.base.Runner.Run(ctx, refreshScript, m.lockKeys(), token, m.ttl).Result()
	}
	if err != nil {
		return 0, err
	}
	r := kernel.ReadReply(v)
	var deadline int64
	switch {
	case r.Status() == statusHeld && r.Len() == 1: // {1, now ms}
		now := r.Int(0)
		r.Want(now > 0)
		deadline = leaseFrom(now, m.cfg.TTL)
	default: // {0}
		r.Want(r.Status() == statusNotHeld && r.Len() == 0)
	}
	return deadline, r.Err()
}

// claim.lua: KEYS lock; ARGV the waiter's token, the deadline its notice
// stated, in ms.
var claimScript = script.Load(scriptFiles, "scripts/claim.lua")

// claimRun runs claim.lua: token takes the lock handed to it until
// deadline, and reports whether it holds it.
func (m *Mutex) claimRun(ctx context.Context, token string, deadline time.Time) (bool, error) {
	return kernel.Held(m.base.Runner.Run(ctx, claimScript, m.lockKeys(), token, deadline.UnixMilli()).Int64())
}

// inspect.lua: KEYS lock, queue deadlines; no ARGV. It writes nothing, so
// it runs on the client, not through Mutex.runner.
var inspectScript = script.Load(scriptFiles, "scripts/inspect.lua")

// inspect runs inspect.lua, whose reply is {status, token, ms left,
// waiters, server clock µs}: status 1 when the lock is held, and its
// token then not empty.
func (m *Mutex) inspect(ctx context.Context) (Info, error) {
	v, err := inspectScript.Run(ctx, m.base.Client, m.inspectKeys()).Result()
	if err != nil {
		return Info{}, err
	}
	r := kernel.ReadReply(v)
	info := Info{Token: r.String(0), Waiters: r.Int(2), FenceFloor: r.Int(3)}
	left := r.Int(1)
	r.Want(r.Len() == 4 && (r.Status() == statusHeld) == (info.Token != "") && (r.Status() == statusHeld || r.Status() == statusNotHeld))
	if err := r.Err(); err != nil {
		return Info{}, err
	}
	switch {
	case info.Token == "":
	case left == -1:
		info.TTL = -1
	case left >= 0:
		info.TTL = time.Duration(left) * time.Millisecond
	}
	return info, nil
}
