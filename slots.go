package slotlimit

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
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

	// The settings record beside the key (see Config): its name, its
	// fields, its expiry, and when this value last wrote it.
	recordKey    string
	recordFields url.Values
	recordTTL    time.Duration
	memo         *record.Memo
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

// withRecord sets the settings record that s writes beside its key: at
// name, fields, expiring record.TTL(outlive), outlive being the longest
// the data a call writes can outlive it.
func (s *slots) withRecord(name string, fields url.Values, outlive time.Duration) {
	s.recordKey, s.recordFields, s.recordTTL = name, fields, record.TTL(outlive)
	s.memo = new(record.Memo)
}

// writeRecord writes the settings record when it is due: at most once a
// minute, with one SET, sent on the client (never waiting for replicas).
// Its failure does not fail the call that follows, whose own command meets
// the same Redis, and it is tried again on the next call.
func (s *slots) writeRecord(ctx context.Context) {
	if s.memo == nil {
		return
	}
	s.memo.Write(ctx, s.base.Client, s.recordKey, s.recordFields, s.recordTTL) //nolint:errcheck // see above
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
