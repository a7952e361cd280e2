package lock

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL
// when the server answers NOSCRIPT. Scripts that write run through a
// script.Runner, the Mutex's, so that Config.Replicas acknowledge them.
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

// The statuses scripts reply with first.
const (
	statusNotHeld = 0 // the caller does not hold the lock (it is queued, for obtain_queued.lua)
	statusHeld    = 1 // the caller holds the lock, or held it and freed it
	statusWaiters = 2 // unlock.lua: the caller holds the lock, marked: someone may wait
)

// Each script's keys, in the order its KEYS take them: a prefix of the
// Mutex's keys, or the two inspect.lua reads.
func (m *Mutex) lockKeys() []string  { return m.keys[keyLock : keyLock+1] }       // unlock.lua, refresh.lua, claim.lua
func (m *Mutex) queueKeys() []string { return m.keys[keyLock : keyQueueWants+1] } // obtain_queued.lua, hand_off.lua
func (m *Mutex) inspectKeys() []string { // inspect.lua
	return []string{m.keys[keyLock], m.keys[keyQueueDeadlines]}
}

// gone.lua: the answer of hand_off.lua when the caller no longer holds
// the lock, included on that path only; unlockRun gives unlock.lua's the
// same way (beforeDeadline).
var (
	//go:embed scripts/gone.lua
	goneLua string
	goneLib = script.Lib{Include: "-- #include gone.lua\n", Source: goneLua}
)

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

// decodeHeld reads the reply of a script whose reply is its status alone
// (unlock.lua, hand_off.lua, claim.lua): whether the caller held the lock.
func decodeHeld(status int64, err error) (bool, error) {
	switch {
	case err != nil:
		return false, err
	case status != statusHeld && status != statusNotHeld:
		return false, callerr.UnexpectedReply(status)
	}
	return status == statusHeld, nil
}

// obtain_queued.lua: KEYS lock, queue, queue deadlines, queue wants; ARGV
// the owner's token, the lease time in ms, the queue entry's lease in ms.
var (
	//go:embed scripts/obtain_queued.lua
	obtainQueuedLua    string
	obtainQueuedScript = script.New(obtainQueuedLua, waitqueue.Lib)
)

// obtainQueued runs obtain_queued.lua for token and returns its reply: the
// fence when token holds the lock (0 otherwise), what a waiter's try
// reports otherwise, and the server's clock in ms.
func (m *Mutex) obtainQueued(ctx context.Context, token string) (fence int64, try waitqueue.Try, now int64, err error) {
	reply, err := m.runner.Run(ctx, obtainQueuedScript, m.queueKeys(), token, m.ttl, waitqueue.EntryTTLArg).Int64Slice()
	if err != nil {
		return 0, try, 0, err
	}
	switch {
	case len(reply) == 3 && reply[0] == statusHeld: // {1, fence, now}
		return reply[1], waitqueue.Try{Done: true}, reply[2], nil
	case len(reply) == 4 && reply[0] == statusNotHeld: // {0, ms until the holder's lease lapses, arrival, now}
		now = reply[3]
		return 0, waitqueue.Try{Arrival: reply[2], Lapse: time.Duration(reply[1]) * time.Millisecond, Clock: time.UnixMilli(now)}, now, nil
	}
	return 0, try, 0, callerr.UnexpectedReply(reply)
}

// unlock.lua: KEYS lock; ARGV the owner's token. hand_off.lua: KEYS
// lock, queue, queue deadlines, queue wants; ARGV the caller's token,
// Mutex.handOff, the caller's lease deadline (deadlineArg).
var (
	//go:embed scripts/unlock.lua
	unlockLua    string
	unlockScript = script.New(unlockLua)

	//go:embed scripts/hand_off.lua
	handOffLua    string
	handOffScript = script.New(handOffLua, waitqueue.Lib, goneLib)
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
		return decodeHeld(run.Run(ctx, handOffScript, m.queueKeys(), token, m.handOff, deadlineArg(deadline)).Int64())
	case status == statusNotHeld && deadline > 0:
		return m.beforeDeadline(ctx, deadline)
	}
	return decodeHeld(status, nil)
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
	noWait := script.Runner{Client: m.client}
	err := noWait.Tx(ctx, m.cfg.Key, func(do func(args ...any) *redis.Cmd) {
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
	_, err := decodeHeld(run.Run(ctx, handOffScript, m.queueKeys(), token, m.handOff, noDeadline).Int64())
	return err
}

// refresh.lua: KEYS lock; ARGV the owner's token, the lease time in ms.
var (
	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = script.New(refreshLua)
)

// refreshRun runs refresh.lua for token, and returns the deadline its
// lease lasts at least until, in ms, or 0 when token does not hold the
// lock.
func (m *Mutex) refreshRun(ctx context.Context, token string) (int64, error) {
	reply, err := m.runner.Run(ctx, refreshScript, m.lockKeys(), token, m.ttl).Int64Slice()
	switch {
	case err != nil:
		return 0, err
	case len(reply) == 2 && reply[0] == statusHeld && reply[1] > 0: // {1, now ms}
		return leaseFrom(reply[1], m.cfg.TTL), nil
	case len(reply) == 1 && reply[0] == statusNotHeld: // {0}
		return 0, nil
	}
	return 0, callerr.UnexpectedReply(reply)
}

// claim.lua: KEYS lock; ARGV the waiter's token, the deadline its notice
// stated, in ms.
var (
	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua)
)

// claimRun runs claim.lua: token takes the lock handed to it until
// deadline, and reports whether it holds it.
func (m *Mutex) claimRun(ctx context.Context, token string, deadline time.Time) (bool, error) {
	return decodeHeld(m.runner.Run(ctx, claimScript, m.lockKeys(), token, deadline.UnixMilli()).Int64())
}

// inspect.lua: KEYS lock, queue deadlines; no ARGV. It writes nothing, so
// it runs on the client, not through Mutex.runner.
var (
	//go:embed scripts/inspect.lua
	inspectLua    string
	inspectScript = script.New(inspectLua)
)

// inspect runs inspect.lua.
func (m *Mutex) inspect(ctx context.Context) (Info, error) {
	reply, err := inspectScript.Run(ctx, m.client, m.inspectKeys()).Slice()
	if err != nil {
		return Info{}, err
	}
	info, ok := decodeInfo(reply)
	if !ok {
		return Info{}, callerr.UnexpectedReply(reply)
	}
	return info, nil
}

// decodeInfo reads the reply of inspect.lua: {status, token, ms left,
// waiters, server clock µs}.
func decodeInfo(reply []any) (Info, bool) {
	if len(reply) != 5 {
		return Info{}, false
	}
	status, ok0 := reply[0].(int64)
	token, ok1 := reply[1].(string)
	left, ok2 := reply[2].(int64)
	waiters, ok3 := reply[3].(int64)
	now, ok4 := reply[4].(int64)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || (status == statusHeld) != (token != "") {
		return Info{}, false
	}
	info := Info{Token: token, Waiters: waiters, FenceFloor: now}
	switch {
	case token == "":
	case left == -1:
		info.TTL = -1
	case left >= 0:
		info.TTL = time.Duration(left) * time.Millisecond
	}
	return info, true
}
