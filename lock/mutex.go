package lock

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A Mutex is a lock shared by every process that uses its Redis key: one
// owner at a time. Each TryLock or Lock that succeeds returns a *Lock, the
// handle of one owner, with a token that names it in Redis and a fence
// that grows with every new owner. The key holds the owner's token as a
// plain string with a PX expiry, the data of redislock, redsync and the
// classic SET NX PX scripts, so that they and a Mutex keep each other
// out. A Mutex is safe for concurrent use.
type Mutex struct {
	base    kernel.Base // Keys: the keys in the order of keys.go, then the notice channel
	cfg     Config
	notices *notice.Site

	// Script arguments, boxed once: the lease time in ms, and how an
	// unlock hands the lock to a waiter (waitqueue.HandOff).
	ttl, handOff any

	// The owner record (see owner.go): the handle ID that begins each
	// token, the record's name, its value and its expiry in ms (boxed
	// once), and the memo of when it was last written, which the
	// Mutexes of the client share.
	id, ownerKey    string
	owner, ownerTTL any
	memo            *record.Memo
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
	if err := errs.Duration("TTL", cfg.TTL, MaxTTL); err != nil {
		return nil, err
	}
	if fault := checkOwner(cfg.Owner); fault != "" {
		return nil, errs.Config("Owner %s", fault)
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Owner == "" {
		cfg.Owner = defaultOwner()
	}
	cfg.ReplicaTimeout = b.ReplicaTimeout
	id := handleID(cfg.Owner, cfg.TTL)
	prefix, _ := hashtag.SidePrefix(cfg.Key) // New checked that it has one
	return &Mutex{
		base:     b,
		cfg:      cfg,
		notices:  waitqueue.Notices.Site(client),
		ttl:      strconv.FormatInt(cfg.TTL.Milliseconds(), 10),
		handOff:  waitqueue.HandOff(client, b.Keys[numKeys]),
		id:       id,
		ownerKey: prefix + ownerSide + id,
		owner:    ownerRecord(cfg.Owner),
		ownerTTL: strconv.FormatInt(record.TTL(cfg.TTL).Milliseconds(), 10),
		memo:     ownerMemo(client),
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

// TryLock takes the lock if no one holds it, and never waits. On success
// it returns the Lock. When another owner holds the lock, it returns a
// nil *Lock and an error matching ErrNotObtained. After any other error
// it holds nothing: when the outcome is unknown (ErrOutcomeUnknown), it
// unlocks what it may have taken before it returns; call it again. A
// TryLock that go-redis sends again returns the Lock its first run took.
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
