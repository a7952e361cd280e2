package slotlimit

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadClaimScript caches the script that claims a handed lease on client's
// server, so that a claim runs at its first EVALSHA.
func LoadClaimScript(ctx context.Context, client *redis.Client) error {
	return claimScript.Load(ctx, client).Err()
}

// Queued returns the calls of l queued behind a batch in flight: tries of
// weight n, or with n 0, releases.
func Queued(l *Limiter, n int64) int {
	if n == 0 {
		return l.lanes.releases.Queued(struct{}{})
	}
	return l.lanes.tries.Queued(tryKey{n: n})
}

// QueuedRenewals returns the renewals of l queued behind a batch in flight.
func QueuedRenewals(l *Limiter) int { return l.lanes.renewals.Queued(struct{}{}) }

// QueuedJoins returns the tries of weight n of waiting acquires queued
// behind a batch in flight.
func QueuedJoins(l *Limiter, n int64) int { return l.lanes.tries.Queued(tryKey{n: n, join: true}) }

// RecordDueNow makes l's limit record due at its next call, as
// record.Retry after a write that did not reach Redis.
func RecordDueNow(l *Limiter) { l.memo.Forget(l.recordKey) }
