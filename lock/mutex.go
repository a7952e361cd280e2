package lock

import (
	"context"
	"crypto/rand"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A Mutex is a lock shared by every process that uses its Redis key. Each
// TryLock or Lock that succeeds returns a *Lock, the handle of one owner,
// with a token that names it in Redis and a fencing token that grows with
// every new owner.
//
// The key holds the owner's token as a plain string with a PX expiry: the
// data of redislock, of redsync and of the classic SET NX PX scripts, so
// that a lock taken by any of them keeps the others out. While a Lock
// waits for a Mutex's owner, the owner's token is marked with a '+' after
// it, so that its Unlock looks for waiters then, and only then; another
// client's token is never changed. Every expiry is on the Redis
// server's clock. A Mutex waits without polling: Lock joins a queue in
// Redis, and Unlock hands the lock straight to the first waiter and wakes
// it alone, through a notice on pub/sub; a lock that lapses instead wakes
// the waiters when it lapses.
//
// A Mutex is safe for concurrent use.
type Mutex struct {
	base    kernel.Base // Keys: the keys in the order of keys.go, then the notice channel
	cfg     Config
	notices *notice.Site

	// Script arguments, boxed once: the lease time in ms, and how an
	// unlock hands the lock to a waiter (waitqueue.HandOff).
	ttl, handOff any
}

// New returns a Mutex for cfg. It returns an error matching
// ErrInvalidConfig, naming the field, when client is nil (untyped, or a
// typed nil) or cfg is invalid. New does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Mutex, error) {
	b, err := errs.New(client, kernel.Settings{Keyed: true, Key: cfg.Key, Sides: sides,
		Replicas: cfg.Replicas, ReplicaTimeout: cfg.ReplicaTimeout, Observer: cfg.Observer})
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.check()
	if err != nil {
		return nil, err
	}
	cfg.ReplicaTimeout = b.ReplicaTimeout
	return &Mutex{
		base:    b,
		cfg:     cfg,
		notices: waitqueue.Notices.Site(client),
		ttl:     strconv.FormatInt(cfg.TTL.Milliseconds(), 10),
		handOff: waitqueue.HandOff(client, b.Keys[numKeys]),
	}, nil
}

// Config returns the Mutex's configuration, with the defaults filled in;
// the zero Config for a zero or nil Mutex.
func (m *Mutex) Config() Config {
	if m == nil {
		return Config{}
	}
	return m.cfg
}

// check returns the error of a call of method with ctx on m, or nil when
// it may go on (see kernel.Errors.Check).
func (m *Mutex) check(ctx context.Context, method string) error {
	if m == nil {
		return errs.Check(ctx, false, method, "")
	}
	return errs.Check(ctx, m.base.Usable(), method, m.base.Key)
}

// channel is the lock's notice channel.
func (m *Mutex) channel() string { return m.base.Keys[numKeys] }

// TryLock takes the lock if no one holds it, and never waits. When another
// owner holds it, TryLock returns a nil *Lock and an error matching
// ErrNotObtained.
//
// The Lock's token is made before the call is sent, so a call that
// go-redis sends again after its reply was lost finds the lock held by
// its own token and returns the Lock, as its first run would have; its
// fence is then read by the call sent again (see Lock.Fence). An error
// from the connection leaves the outcome unknown and matches
// ErrOutcomeUnknown; TryLock then unlocks what it may have taken before
// it returns, so a failed TryLock holds nothing: call it again.
func (m *Mutex) TryLock(ctx context.Context) (*Lock, error) {
	if err := m.check(ctx, "TryLock"); err != nil {
		return nil, err
	}
	l := m.newLock()
	c := l.begin("TryLock")
	start := time.Now()
	fence, deadline, err := m.obtain(ctx, l.token)
	if err != nil {
		if callerr.OutcomeUnknown(err) {
			l.unlockDetached(ctx)
		}
		err = errs.Call(ctx, "TryLock", m.base.Key, err)
		c.Failed(ctx, err)
		return nil, err
	}
	if fence == 0 {
		c.Refused(ctx, 1)
		return nil, errs.Op("TryLock", m.base.Key, ErrNotObtained)
	}
	l.taken(start, fence, deadline)
	c.Acquired(ctx, 1)
	return l, nil
}

// newToken returns a random 128-bit owner token.
func newToken() string {
	return rand.Text()
}
