package slotlimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Limiter lets at most Limit holders at once into a guarded section,
// across every process that shares its Redis key.
//
// Each holder, such as a device ID, holds at most one slot, under a lease
// that lapses TTL after it was taken or last renewed. A holder that crashes
// without releasing costs its one slot until its own lease lapses, and no
// longer; the other leases are untouched. Every check-and-take, release and
// renewal is one Lua script, so the limit holds under any interleaving of
// callers, and every deadline is read from the Redis server's clock, so
// callers with skewed clocks agree on when a lease lapses.
//
// Most callers want TryAcquire on an event (a device report) and Release
// when the work is done, or Acquire to wait for a slot.
//
// The slots live in one sorted set at Config.Key, holder -> deadline. The
// key expires by itself when its last lease lapses. Limiters with different
// TTLs may share a key: each lease keeps the deadline it was given.
//
// A Limiter is safe for concurrent use. It holds no state besides its
// configuration, so building one is cheap.
type Limiter struct {
	slots
}

// New returns a Limiter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. New does not
// contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	s, err := newSlots(client, cfg, DefaultTTL)
	if err != nil {
		return nil, err
	}
	return &Limiter{s}, nil
}

// Config returns the Limiter's configuration, with the default TTL filled in.
func (l *Limiter) Config() Config {
	return l.cfg
}

// TryAcquire takes a slot for holder if one is free, and never waits.
//
// A holder that already holds a slot keeps it: its lease is renewed and no
// second slot is taken. When every slot is taken, TryAcquire returns a
// Result with Acquired false and a RetryAfter hint, and a nil error.
//
// An error means the outcome is unknown when it came from the connection
// (for example a timeout after the call was sent). Calling TryAcquire or
// Release again for the same holder is always safe: both are idempotent.
func (l *Limiter) TryAcquire(ctx context.Context, holder string) (Result, error) {
	if err := checkHolder(holder); err != nil {
		return Result{Limit: l.cfg.Limit}, err
	}
	reply, err := acquireScript.Run(ctx, l.client, l.keys, holder, l.limit, l.ttl).Int64Slice()
	if err != nil {
		return Result{Limit: l.cfg.Limit}, opError("acquire", l.cfg.Key, err)
	}
	if len(reply) != 4 {
		return Result{Limit: l.cfg.Limit}, opError("acquire", l.cfg.Key, errUnexpectedReply(reply))
	}
	res := Result{Acquired: reply[0] == 1, Count: reply[1], Limit: l.cfg.Limit}
	if res.Acquired {
		res.ExpiresAt = time.UnixMilli(reply[2])
	} else {
		res.RetryAfter = time.Duration(reply[3]) * time.Millisecond
	}
	return res, nil
}

// Acquire takes a slot for holder, waiting until one is free or ctx is done.
//
// On success it returns a Result with Acquired true; a holder that already
// holds a slot gets it back at once, renewed. If ctx is done first, Acquire
// returns an error that matches ctx.Err() and takes no slot: a ctx that is
// done on entry sends nothing to Redis, and if ctx ends while a call is in
// flight, so that its outcome is unknown, Acquire releases holder before it
// returns. Any other error is returned as it is, and when it leaves the
// outcome unknown (a broken connection, say) holder is released too, so a
// failed Acquire never leaves a phantom slot behind while Redis answers.
//
// While it waits, Acquire tries again when the earliest lease is due to
// lapse, and at least every 100ms, with jitter so that waiters spread out.
func (l *Limiter) Acquire(ctx context.Context, holder string) (Result, error) {
	if err := checkHolder(holder); err != nil {
		return Result{Limit: l.cfg.Limit}, err
	}
	res, err := wait(ctx, func() (Result, error) {
		res, err := l.TryAcquire(ctx, holder)
		if err != nil && outcomeUnknown(err) {
			l.releaseDetached(ctx, holder)
		}
		return res, err
	})
	return acquireOutcome(ctx, l.cfg, res, err)
}

// releaseDetached releases holder after ctx has failed an acquire: it runs
// even when ctx is done, bounded by cleanupTimeout.
func (l *Limiter) releaseDetached(ctx context.Context, holder string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	l.Release(ctx, holder) //nolint:errcheck // best effort; the lease lapses by itself
}

// Release frees holder's slot. It reports whether holder held a live lease;
// releasing a slot that was never taken, already released or already lapsed
// returns false and a nil error.
func (l *Limiter) Release(ctx context.Context, holder string) (bool, error) {
	if err := checkHolder(holder); err != nil {
		return false, err
	}
	n, err := releaseScript.Run(ctx, l.client, l.keys, holder).Int64()
	if err != nil {
		return false, opError("release", l.cfg.Key, err)
	}
	return n == 1, nil
}

// Renew extends holder's lease to TTL from now. It returns false when
// holder holds no live lease; it never takes a slot that had lapsed.
func (l *Limiter) Renew(ctx context.Context, holder string) (bool, error) {
	if err := checkHolder(holder); err != nil {
		return false, err
	}
	deadline, err := renewScript.Run(ctx, l.client, l.keys, holder, l.ttl).Int64()
	if err != nil {
		return false, opError("renew", l.cfg.Key, err)
	}
	return deadline > 0, nil
}

// Count returns the number of live leases.
func (l *Limiter) Count(ctx context.Context) (int64, error) {
	n, err := countScript.Run(ctx, l.client, l.keys).Int64()
	if err != nil {
		return 0, opError("count", l.cfg.Key, err)
	}
	return n, nil
}

// Holders returns the live leases, earliest deadline first.
func (l *Limiter) Holders(ctx context.Context) ([]Holder, error) {
	reply, err := holdersScript.Run(ctx, l.client, l.keys).StringSlice()
	if err != nil {
		return nil, opError("holders", l.cfg.Key, err)
	}
	holders := make([]Holder, 0, len(reply)/2)
	for i := 0; i+1 < len(reply); i += 2 {
		ms, err := strconv.ParseFloat(reply[i+1], 64)
		if err != nil {
			return nil, opError("holders", l.cfg.Key, err)
		}
		holders = append(holders, Holder{ID: reply[i], ExpiresAt: time.UnixMilli(int64(ms))})
	}
	return holders, nil
}

func errUnexpectedReply(reply any) error {
	return fmt.Errorf("unexpected reply %v", reply)
}

// outcomeUnknown reports whether err leaves it open whether a script ran.
// A reply from Redis, even an error reply, means the script ran or was
// refused as a whole; anything else (a timeout, a broken connection, a done
// context) may have struck after the call was sent.
func outcomeUnknown(err error) bool {
	var reply redis.Error
	return !errors.As(err, &reply)
}
