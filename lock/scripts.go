package lock

import (
	"context"
	_ "embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Each atomic operation is one Lua script, run by internal/script: EVALSHA,
// and EVAL when the server answers NOSCRIPT. Scripts that write run
// through a script.Runner, the Mutex's, so that Config.Replicas
// acknowledge them. This file is the Go side of each script's contract:
// the keys it takes, its arguments and the one decoder of its reply; the
// Lua side is the header of each file in scripts/.
//
// TryLock needs no script: SET NX and TIME in one MULTI take the lock and
// read its fence (see obtain.go).
var (
	//go:embed scripts/gone.lua
	goneLua string
	goneLib = script.Lib{Include: "-- #include gone.lua\n", Source: goneLua}

	//go:embed scripts/obtain_queued.lua
	obtainQueuedLua    string
	obtainQueuedScript = script.New(obtainQueuedLua, waitqueue.Lib)

	//go:embed scripts/unlock.lua
	unlockLua    string
	unlockScript = script.New(unlockLua, goneLib)

	//go:embed scripts/hand_off.lua
	handOffLua    string
	handOffScript = script.New(handOffLua, waitqueue.Lib, goneLib)

	//go:embed scripts/refresh.lua
	refreshLua    string
	refreshScript = script.New(refreshLua)

	//go:embed scripts/claim.lua
	claimLua    string
	claimScript = script.New(claimLua)
)

// noDeadline is the deadline argument of a caller that does not know its
// lease's deadline (see unlock.lua).
const noDeadline = "0"

// deadlineArg is the deadline argument of unlock.lua and hand_off.lua.
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

// obtainQueued runs obtain_queued.lua for token, through run, and returns
// its reply: the fence when token holds the lock (0 otherwise), what a
// waiter's try reports otherwise, and the server's clock in ms.
func (m *Mutex) obtainQueued(ctx context.Context, token string) (fence int64, try waitqueue.Try, now int64, err error) {
	reply, err := m.runner.Run(ctx, obtainQueuedScript, m.keys, token, m.ttl, waitqueue.EntryTTLArg).Int64Slice()
	if err != nil {
		return 0, try, 0, err
	}
	if len(reply) != 3 {
		return 0, try, 0, callerr.UnexpectedReply(reply)
	}
	now = reply[2]
	if reply[0] > 0 {
		return reply[0], waitqueue.Try{Done: true}, now, nil
	}
	return 0, waitqueue.Try{Arrival: reply[1], Lapse: time.Duration(-reply[0]) * time.Millisecond, Clock: time.UnixMilli(now)}, now, nil
}

// unlockRun runs unlock.lua, and hand_off.lua when someone waits, for
// token through run, with deadline the caller's lease deadline (0:
// unknown). It reports whether token held the lock.
func (m *Mutex) unlockRun(ctx context.Context, run *script.Runner, token string, deadline int64) (bool, error) {
	dl := deadlineArg(deadline)
	held, err := run.Run(ctx, unlockScript, m.keys[:keyQueueDeadlines], token, dl).Int64()
	if err == nil && held == 2 {
		held, err = run.Run(ctx, handOffScript, m.keys, token, m.handOff, dl).Int64()
	}
	return held == 1, err
}

// leaveQueue runs hand_off.lua for token through run: a waiter that gives up
// leaves the queue, and hands on the lock if it was handed it.
func (m *Mutex) leaveQueue(ctx context.Context, run *script.Runner, token string) error {
	return run.Run(ctx, handOffScript, m.keys, token, m.handOff, noDeadline).Err()
}

// refreshRun runs refresh.lua for token, and returns the deadline its
// lease lasts at least until, in ms, or 0 when token does not hold the
// lock.
func (m *Mutex) refreshRun(ctx context.Context, token string) (int64, error) {
	now, err := m.runner.Run(ctx, refreshScript, m.keys[:keyQueue], token, m.ttl).Int64()
	if err != nil || now <= 0 {
		return 0, err
	}
	return leaseFrom(now, m.cfg.TTL), nil
}

// claimRun runs claim.lua: token takes the lock handed to it until
// deadline, and reports whether it holds it.
func (m *Mutex) claimRun(ctx context.Context, token string, deadline time.Time) (bool, error) {
	held, err := m.runner.Run(ctx, claimScript, m.keys[:keyQueue], token, deadline.UnixMilli()).Int64()
	return held == 1, err
}
