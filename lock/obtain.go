package lock

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// obtain takes the lock for token if no one holds it, in one round trip
// and without a script:
//
//	MULTI
//	SET key token NX GET PX ttl   -- takes it; GET fails a key of another type with WRONGTYPE, untouched
//	TIME                          -- the fence: the server's clock in µs as the lock was taken
//	SET owner record PX ttl       -- the owner record, once it is due (see owner.go)
//	EXEC
//	WAIT replicas timeout         -- with Config.Replicas only
//
// sent as one unit by the Mutex's script.Runner, which follows the
// Cluster's redirects to the key's master.
//
// It returns the fence, or 0 when another owner holds the lock, and the
// deadline (ms, the server's clock) that the lease lasts at least until,
// 0 when unknown. The fence is read in the transaction that takes the
// lock, so no other owner comes between the two, and the next owner can
// take the lock only after this one unlocked it (after this call's reply
// came back) or its lease lapsed: later, by the server's clock.
//
// A transaction that go-redis sends again after its reply was lost finds
// the lock held by token (marked, if a waiter queued meanwhile: see
// waitMark), which SET ... GET returns: its first run took
// it, and it returns the fence it reads itself, later than the first
// run's but before any later owner's. The lease then runs from the first
// run, which this one cannot see, so the deadline is unknown.
//
// A transaction that Redis refused for the owner record (its SET queued
// with NOPERM, so EXEC answered EXECABORT and nothing ran) is sent again
// at once without it (see owner.go).
func (m *Mutex) obtain(ctx context.Context, token string) (fence, deadline int64, err error) {
	owner := m.ownerDue()
	fence, deadline, err = m.obtainTx(ctx, token, owner)
	if err != nil && owner && m.ownerFailed(err) {
		return m.obtainTx(ctx, token, false)
	}
	return fence, deadline, err
}

// obtainTx sends obtain's transaction once, with the owner record's SET
// when owner is set.
func (m *Mutex) obtainTx(ctx context.Context, token string, owner bool) (fence, deadline int64, err error) {
	var exec *redis.Cmd
	want := 2
	if owner {
		want = 3
	}
	err = m.base.Runner.Tx(ctx, m.base.Key, func(do func(args ...any) *redis.Cmd) {
		do("multi")
		do("set", m.base.Key, token, "nx", "get", "px", m.ttl)
		do("time")
		if owner {
			do("set", m.ownerKey, m.owner, "px", m.ownerTTL)
		}
		exec = do("exec")
	}, func() bool {
		replies, err := exec.Slice()
		return err == nil && len(replies) == want && (replies[0] == nil || replies[0] == token || replies[0] == token+waitMark)
	})
	var replies []any
	if err == nil {
		replies, err = exec.Slice()
	}
	if err == nil && len(replies) != want {
		err = callerr.UnexpectedReply(replies)
	}
	if err != nil {
		return 0, 0, err
	}
	if err, ok := replies[0].(error); ok {
		return 0, 0, err
	}
	resent := replies[0] == token || replies[0] == token+waitMark
	if replies[0] != nil && !resent {
		return 0, 0, nil // held: SET ... GET returned the holder's token
	}
	fence, err = microseconds(replies[1])
	if err != nil || resent {
		return fence, 0, err
	}
	return fence, leaseFrom(fence/1000, m.cfg.TTL), nil
}

// microseconds reads a TIME reply, {seconds, microseconds}, as µs.
func microseconds(reply any) (int64, error) {
	if t, ok := reply.([]any); ok && len(t) == 2 {
		sec, ok1 := t[0].(string)
		usec, ok2 := t[1].(string)
		s, err1 := strconv.ParseInt(sec, 10, 64)
		u, err2 := strconv.ParseInt(usec, 10, 64)
		if ok1 && ok2 && err1 == nil && err2 == nil {
			return s*1_000_000 + u, nil
		}
	}
	return 0, callerr.UnexpectedReply(reply)
}
