package adaptive

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// A Limiter is one instance's handle on a shared adaptive limit: at most
// the limit's slots are held at once across every Limiter of the key, and
// the limit itself, kept in Redis, follows what the callers report of the
// system behind it (see the package doc).
//
// TryAcquire takes a slot or returns ErrLimited at once; Acquire waits
// for one, without polling. Each call that got a Slot frees it with
// exactly one of Success, Dropped or Ignore, which also tells the limit
// how the call went.
//
// A Limiter is safe for concurrent use. It holds no state of the limit in
// process, so any number of Limiters, in any number of processes, share
// one key.
type Limiter struct {
	base    kernel.Base
	cfg     Config
	keys    []string // the keys in the order of keys.go
	notices *notice.Site

	// Script arguments, boxed once (see scripts.go).
	bounds, ttl, tuning, handOff any

	// The runs that concurrent tries and releases share (see scripts.go).
	tries    coalesce.Group[struct{}, try, grant]
	releases coalesce.Group[struct{}, release, freed]
	// unsettled are the slots whose try's ctx ended while its run was in
	// flight, until that run returns (see Slot.leave).
	unsettled coalesce.Unsettled

	// memo keeps the record of the Limiter's bounds written at most once
	// a minute (see recordBounds).
	memo record.Memo
}

// New returns a Limiter for cfg. It returns an error matching
// ErrInvalidConfig, naming the field, when client is nil (untyped, or a
// typed nil) or cfg is invalid. New does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
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
	l := &Limiter{
		base:    b,
		cfg:     cfg,
		keys:    b.Keys[1 : 1+numKeys],
		notices: waitqueue.Notices.Site(client),
		bounds:  boundsArg(cfg),
		ttl:     strconv.FormatInt(cfg.TTL.Milliseconds(), 10),
		tuning:  tuningArg(cfg),
		handOff: waitqueue.HandOff(client, b.Keys[1+numKeys]),
	}
	l.tries.Send, l.tries.Max, l.tries.Alone = l.sendTries, maxRun, cfg.DisableCoalescing
	l.releases.Send, l.releases.Max, l.releases.Alone = l.sendReleases, maxRun, cfg.DisableCoalescing
	return l, nil
}

// Config returns the Limiter's configuration, with the defaults filled
// in; the zero Config for a zero or nil Limiter.
func (l *Limiter) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// check returns the error of a call of method with ctx on l, or nil when
// it may go on (see kernel.Errors.Check).
func (l *Limiter) check(ctx context.Context, method string) error {
	if l == nil {
		return errs.Check(ctx, false, method, "")
	}
	return errs.Check(ctx, l.base.Usable(), method, l.base.Key)
}

// begin starts the report of a call of method that takes or frees one
// slot for holder; the limit is learnt from its answer (Call.SetLimit).
func (l *Limiter) begin(method, holder string) observe.Call {
	return l.base.Begin(method, l.base.Key, holder, 1, 0)
}

// channel is the limit's notice channel.
func (l *Limiter) channel() string { return l.base.Keys[1+numKeys] }

// TryAcquire takes a slot if fewer than the shared limit are in use, and
// never waits. On success it returns the Slot. When every slot is in use,
// or the limit went down below the slots in use, it returns a nil Slot
// and an error matching ErrLimited. After any other error it holds
// nothing: when the outcome is unknown (ErrOutcomeUnknown) or the
// replicas did not acknowledge the slot (ErrNotReplicated), it frees what
// it may have taken, counting nothing, before it returns, up to a second
// past ctx's end; call it again. A TryAcquire that go-redis sends again
// returns the slot its first run took.
func (l *Limiter) TryAcquire(ctx context.Context) (*Slot, error) {
	if err := l.check(ctx, "TryAcquire"); err != nil {
		return nil, err
	}
	s := l.newSlot()
	c := l.begin("TryAcquire", s.id)
	g, err := l.acquire(ctx, s, false)
	if err != nil {
		if callerr.OutcomeUnknown(err) || errors.Is(err, ErrNotReplicated) {
			s.leave(ctx)
		}
		err = errs.Call(ctx, "TryAcquire", l.base.Key, err)
		c.Failed(ctx, err)
		return nil, err
	}
	c.SetLimit(g.limit)
	if !g.held {
		c.Refused(ctx, g.inUse)
		return nil, errs.Op("TryAcquire", l.base.Key, ErrLimited)
	}
	s.granted(g.now, g.deadline)
	c.Acquired(ctx, g.inUse)
	return s, nil
}

// Limit returns the current shared limit: the one stored in Redis, kept
// within the Limiter's Min and Max, or Config.Initial when the key holds
// none yet. It writes nothing.
func (l *Limiter) Limit(ctx context.Context) (int64, error) {
	if err := l.check(ctx, "Limit"); err != nil {
		return 0, err
	}
	stored, err := l.base.Client.HGet(ctx, l.keys[keyState], "limit").Int64()
	switch {
	case err == redis.Nil:
		return l.cfg.Initial, nil
	case err != nil:
		return 0, errs.Call(ctx, "Limit", l.base.Key, err)
	}
	return min(max(stored, l.cfg.Min), l.cfg.Max), nil
}
