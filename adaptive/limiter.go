package adaptive

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/script"
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
	client  redis.UniversalClient
	runner  script.Runner // runs the scripts that write, with WAIT for Config.Replicas
	cfg     Config
	keys    []string // see keyNames
	channel string   // the notice channel
	notices *notice.Site

	// Script arguments, boxed once (see scripts.go).
	bounds, ttl, tuning, handOff any
}

// New returns a Limiter for cfg. It returns an error matching
// ErrInvalidConfig when client is nil (untyped, or a typed nil) or cfg is
// invalid, naming the field. New does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Limiter, error) {
	if script.IsNil(client) {
		return nil, invalidConfig("client is nil")
	}
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	keys, channel, ok := keyNames(cfg.Key)
	if !ok {
		return nil, invalidConfig("Key %q has a '}' but no hash tag", cfg.Key)
	}
	return &Limiter{
		client: client,
		runner: script.Runner{Client: client, Replicas: cfg.Replicas, ReplicaTimeout: cfg.ReplicaTimeout,
			NotReplicated: ErrNotReplicated},
		cfg:     cfg,
		keys:    keys,
		channel: channel,
		notices: waitqueue.Notices.Site(client),
		bounds:  boundsArg(cfg),
		ttl:     strconv.FormatInt(cfg.TTL.Milliseconds(), 10),
		tuning:  tuningArg(cfg),
		handOff: fmt.Sprintf("%s %d %s", notice.Command(client), waitqueue.EntryTTL.Milliseconds(), channel),
	}, nil
}

// Config returns the Limiter's configuration, with the defaults filled
// in; the zero Config for a zero or nil Limiter.
func (l *Limiter) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// usable returns the error of a call to a zero or nil Limiter, or with a
// nil ctx.
func (l *Limiter) usable(ctx context.Context) error {
	switch {
	case l == nil || l.client == nil:
		return errUnusable
	case ctx == nil:
		return errNilContext
	}
	return nil
}

// TryAcquire takes a slot if fewer than the shared limit are in use, and
// never waits. When every slot is in use, or the limit went down below
// the slots in use, it returns a nil Slot and an error matching
// ErrLimited.
//
// The Slot's holder ID is made before the call is sent, so a call that
// go-redis sends again after its reply was lost finds the slot its first
// run took and returns it, holding one slot. An error that leaves the
// outcome unknown matches ErrOutcomeUnknown, and one that the replicas
// did not acknowledge (Config.Replicas) matches ErrNotReplicated;
// TryAcquire then frees what it may have taken before it returns (as
// Ignore, which counts nothing), so a failed TryAcquire holds nothing:
// call it again. That release, detached from ctx, may take TryAcquire up
// to a second past ctx's end.
func (l *Limiter) TryAcquire(ctx context.Context) (*Slot, error) {
	if err := l.usable(ctx); err != nil {
		return nil, err
	}
	s := l.newSlot()
	c := l.begin("TryAcquire", s.id)
	g, err := l.acquire(ctx, s.id, false)
	if err != nil {
		if callerr.OutcomeUnknown(err) || errors.Is(err, ErrNotReplicated) {
			s.leave(ctx)
		}
		err = callerr.Call(ctx, "adaptive", "try acquire", l.cfg.Key, err)
		c.failed(ctx, err)
		return nil, err
	}
	if !g.held {
		c.refused(ctx, g.inUse, g.limit)
		return nil, callerr.Op("adaptive", "try acquire", l.cfg.Key, ErrLimited)
	}
	s.granted(g.now, g.deadline)
	c.acquired(ctx, g.inUse, g.limit)
	return s, nil
}

// Limit returns the current shared limit: the one stored in Redis, kept
// within the Limiter's Min and Max, or Config.Initial when the key holds
// none yet. It reads one value and writes nothing.
func (l *Limiter) Limit(ctx context.Context) (int64, error) {
	if err := l.usable(ctx); err != nil {
		return 0, err
	}
	stored, err := l.client.HGet(ctx, l.keys[keyState], "limit").Int64()
	switch {
	case err == redis.Nil:
		return l.cfg.Initial, nil
	case err != nil:
		return 0, callerr.Call(ctx, "adaptive", "limit", l.cfg.Key, err)
	}
	return min(max(stored, l.cfg.Min), l.cfg.Max), nil
}
