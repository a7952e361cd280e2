package slotlimit

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// slots is what a Limiter and a Counter share: a checked Config, the
// client, the runner of their writing scripts, and the script arguments
// that never change, formatted once.
type slots struct {
	client redis.UniversalClient
	runner script.Runner // writes, acknowledged by cfg.Replicas
	cfg    Config
	limit  any // cfg.Limit as a script argument, a string boxed once
	ttl    any // cfg.TTL in ms as a script argument, a string boxed once
}

func newSlots(client redis.UniversalClient, cfg Config, defaultTTL time.Duration) (slots, error) {
	cfg, err := cfg.check(defaultTTL)
	if err != nil {
		return slots{}, err
	}
	if script.IsNil(client) {
		return slots{}, invalidConfig("client is nil")
	}
	return slots{
		client: client,
		runner: script.Runner{
			Client:         client,
			Replicas:       cfg.Replicas,
			ReplicaTimeout: cfg.ReplicaTimeout,
			NotReplicated:  ErrNotReplicated,
		},
		cfg:   cfg,
		limit: strconv.FormatInt(cfg.Limit, 10),
		ttl:   formatMillis(cfg.TTL),
	}, nil
}

// acquireOutcome settles what a waiting acquire returns: a failed acquire
// reports no slot, and its error matches ctx.Err() whenever ctx is done,
// unless Redis itself answered with an error, which is kept.
func acquireOutcome(ctx context.Context, cfg Config, res Result, err error) (Result, error) {
	if err == nil {
		return res, nil
	}
	if ctxErr := callerr.ContextDone(ctx); ctxErr != nil && outcomeUnknown(err) {
		err = opError("acquire", cfg.Key, ctxErr)
	}
	return Result{Limit: cfg.Limit}, err
}
