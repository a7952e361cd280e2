package slotlimit

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// slots is what a Limiter and a Counter share: what every package's New
// makes (the client, the runner of writes, the Observer, the key and the
// names beside it), a checked Config, and the script arguments that never
// change, formatted once.
type slots struct {
	base  kernel.Base // what every package's New makes; a field, so that none of it is the Limiter's API
	cfg   Config
	limit any // cfg.Limit as a script argument, a string boxed once
	ttl   any // cfg.TTL in ms as a script argument, a string boxed once
}

// newSlots checks client and cfg, filling in defaultTTL, for a value that
// keeps names ending in sides beside its key (Base.Keys).
func newSlots(client redis.UniversalClient, cfg Config, defaultTTL time.Duration, sides ...string) (slots, error) {
	b, err := errs.New(client, kernel.Settings{
		Keyed:          true,
		Key:            cfg.Key,
		Sides:          sides,
		Replicas:       cfg.Replicas,
		ReplicaTimeout: cfg.ReplicaTimeout,
		Observer:       cfg.Observer,
	})
	if err != nil {
		return slots{}, err
	}
	if cfg, err = cfg.check(defaultTTL); err != nil {
		return slots{}, err
	}
	cfg.ReplicaTimeout = b.ReplicaTimeout
	return slots{
		base:  b,
		cfg:   cfg,
		limit: strconv.FormatInt(cfg.Limit, 10),
		ttl:   formatMillis(cfg.TTL),
	}, nil
}

// usable returns the error of a call of method made with ctx, or nil when
// the call may go on (see kernel.Errors.Check).
func (s *slots) usable(ctx context.Context, method string) error {
	return errs.Check(ctx, s.base.Usable(), method, s.cfg.Key)
}

// acquireOutcome settles what a waiting acquire, a call of method,
// returns: a failed acquire reports no slot, and its error matches
// ctx.Err() whenever ctx is done, unless Redis itself answered with an
// error, which is kept.
func acquireOutcome(ctx context.Context, method string, cfg Config, res Result, err error) (Result, error) {
	if err == nil {
		return res, nil
	}
	if ctxErr := callerr.ContextDone(ctx); ctxErr != nil && outcomeUnknown(err) {
		err = errs.Op(method, cfg.Key, ctxErr)
	}
	return Result{Limit: cfg.Limit}, err
}
