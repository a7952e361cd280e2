package lock

import (
	"context"
	"time"
)

// This file is for operators and tools, such as the slotlimit command:
// what a lock holds (Inspect), and breaking it (Break).

// Info is the state of a lock at one moment, read by one script.
type Info struct {
	// Token is the owner's token: the value the key holds, a Lock's Token
	// or the value that redislock, redsync or a SET NX PX script wrote,
	// without the '+' that a waiter puts after a Lock's token (see
	// Lock.Token). It is "" when the lock is free.
	Token string

	// TTL is the time left on the owner's lease, by the server's clock: 0
	// when the lock is free, and below 0 when the key has no expiry (a
	// client set it without one), so that it never lapses.
	TTL time.Duration

	// Owner is the description of the owner (Config.Owner of the Mutex
	// whose Lock holds the lock), "" when it is unknown: the lock is free,
	// its token was written by another client (redislock, redsync, a SET
	// NX PX script), or the description lapsed (the Mutex has made no call
	// for longer than a minute and its lease time). It is read just after
	// the rest, by a second command.
	Owner string

	// Waiters is the number of callers of Lock queued for the lock.
	Waiters int64

	// FenceFloor is the Redis server's clock, in microseconds, when the
	// Info was read. Fences are not stored in Redis: a fence is the
	// server's clock when its owner took the lock (see Lock.Fence). So
	// the owner's fence is at most FenceFloor, and every owner that takes
	// the lock after the read gets a higher one: storage that has seen a
	// fence above FenceFloor has heard from such an owner.
	FenceFloor int64
}

// Held reports whether an owner held the lock.
func (i Info) Held() bool { return i.Token != "" }

// Inspect reads the lock's owner, the time left on its lease and the
// number of its waiters, at one moment, and then the owner's description
// (Info.Owner); it writes nothing. A key of another type fails with
// WRONGTYPE. After an error matching ErrOutcomeUnknown, call it again.
func (m *Mutex) Inspect(ctx context.Context) (Info, error) {
	if err := m.check(ctx, "Inspect"); err != nil {
		return Info{}, err
	}
	info, err := m.inspect(ctx)
	if err == nil && info.Held() {
		info.Owner, err = m.readOwner(ctx, info.Token)
	}
	if err != nil {
		return Info{}, errs.Call(ctx, "Inspect", m.base.Key, err)
	}
	return info, nil
}

// Break frees the lock if the owner whose token it names (Info.Token)
// still holds it, as that owner's Unlock would: the first waiter, if any,
// is handed the lock. It is for operators, to free a lock whose owner is
// stuck; the owner is not told (see Lock.Unlock). It returns an error
// matching ErrNotHeld, and changes nothing, when that owner no longer
// holds the lock, and ErrInvalidArgument for an empty token. Called again
// after an error matching ErrOutcomeUnknown, it returns nil if the owner
// still held the lock, and ErrNotHeld if the first call broke it.
func (m *Mutex) Break(ctx context.Context, token string) error {
	if err := m.check(ctx, "Break"); err != nil {
		return err
	}
	if token == "" {
		return errs.Op("Break", m.base.Key, errEmptyToken)
	}
	c := m.base.Begin("Break", m.base.Key, token, 1, 1)
	held, err := m.breakOwner(ctx, token)
	held, err = m.released(ctx, &c, "Break", held, err)
	if err == nil && !held {
		return errs.Op("Break", m.base.Key, ErrNotHeld)
	}
	return err
}

// breakOwner reads the lock and frees it if token holds it.
func (m *Mutex) breakOwner(ctx context.Context, token string) (bool, error) {
	info, err := m.inspect(ctx)
	if err != nil || info.Token != token {
		return false, err
	}
	var deadline int64
	if info.TTL > 0 {
		deadline = leaseFrom(info.FenceFloor/1000, info.TTL)
	}
	return m.unlockRun(ctx, &m.base.Runner, token, deadline)
}
