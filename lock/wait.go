package lock

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// Lock takes the lock, waiting until it is free or ctx is done. It does
// not poll. A refused try joins a queue in Redis, and the owner's Unlock
// hands the lock straight to the first waiter in it, in the same script,
// and wakes that waiter alone through a notice; Lock then returns at once,
// with no further round trip, and claims the lock for its full TTL just
// behind the return. A lock that lapses instead (its owner died) wakes the
// waiters when it lapses. A waiter also tries again every second, to keep
// its place in the queue, so a lost notice delays it at most that long.
//
// If ctx is done first, Lock returns an error that matches ctx.Err() and
// holds nothing. Any other error is returned as it is; when it leaves the
// outcome unknown (a broken connection, say), Lock unlocks what it may
// have taken before it returns, so a failed Lock holds nothing.
//
// In the one case where the claim behind the return cannot reach Redis
// within the 3-second claim time, the lock lapses then; the Lock is then
// marked lost, so that KeepAlive's context ends. With Config.Replicas set,
// the claim is made, and acknowledged, before Lock returns.
func (m *Mutex) Lock(ctx context.Context) (*Lock, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, callerr.Call(ctx, "lock", "obtain", m.cfg.Key, err)
	}
	l := m.newLock()
	c := l.begin("Lock")
	start := time.Now()
	w := waitqueue.Join(m.notices, m.channel, l.token)
	defer w.Leave()
	var fence int64
	var refused, released time.Time // the first refusal and the hand-over's release, when observed
	mayHold, err := w.Loop(ctx, func(ctx context.Context) (waitqueue.Try, error) {
		reply, err := m.runner.Run(ctx, obtainQueuedScript, m.keys, l.token, m.ttl, waitqueue.EntryTTLArg).Int64Slice()
		if err != nil {
			return waitqueue.Try{}, err
		}
		if len(reply) != 2 {
			return waitqueue.Try{}, callerr.UnexpectedReply(reply)
		}
		if reply[0] > 0 {
			fence = reply[0]
			return waitqueue.Try{Done: true}, nil
		}
		if c.On() && refused.IsZero() {
			refused = time.Now()
		}
		return waitqueue.Try{Arrival: reply[1], Lapse: time.Duration(-reply[0]) * time.Millisecond}, nil
	}, func(h waitqueue.Handed) (bool, error) {
		if m.cfg.Replicas == 0 {
			go l.claimHanded(ctx, h.Deadline)
			fence = h.Value
			released = h.Deadline.Add(-m.cfg.TTL) // the deadline is a lease time from the release
			return true, nil
		}
		held, err := l.claim(ctx, h.Deadline)
		if held {
			fence = h.Value
			released = h.Deadline.Add(-m.cfg.TTL)
		}
		return held, err
	})
	if !refused.IsZero() {
		c.Waited(ctx, refused)
	}
	if err == nil && !released.IsZero() {
		c.HandedOver(ctx, released)
	}
	if err != nil {
		if mayHold || callerr.OutcomeUnknown(err) {
			l.unlockDetached(ctx)
		}
		if ctxErr := callerr.ContextDone(ctx); ctxErr != nil && callerr.OutcomeUnknown(err) {
			err = ctxErr
		}
		err = callerr.Call(ctx, "lock", "obtain", m.cfg.Key, err)
		c.Failed(ctx, err)
		return nil, err
	}
	l.taken(start, fence)
	c.Acquired(ctx, 1)
	return l, nil
}

// claimHanded claims a lock handed to l until deadline, detached from ctx
// and bounded by cleanupTimeout; if it cannot, the lock lapses when its
// claim time runs out, and l is lost.
func (l *Lock) claimHanded(ctx context.Context, deadline time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if held, err := l.claim(ctx, deadline); err != nil || !held {
		l.keep.Lose()
	}
}

// claim runs claim.lua: l takes the lock an unlock handed it until deadline.
func (l *Lock) claim(ctx context.Context, deadline time.Time) (bool, error) {
	m := l.mutex
	held, err := m.runner.Run(ctx, claimScript, m.keys[:keyQueue], l.token, deadline.UnixMilli()).Int64()
	if err != nil {
		return false, callerr.Call(ctx, "lock", "claim", m.cfg.Key, err)
	}
	return held == 1, nil
}
