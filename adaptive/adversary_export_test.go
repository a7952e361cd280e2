package adaptive

import (
	"context"
)

// Queue runs one waiter's try for holder, as Acquire does, and never
// again: a waiter stopped after it queued (its notices never read). It
// returns whether the try took a slot, and the queue entry it holds.
func Queue(ctx context.Context, l *Limiter, holder string) (held bool, arrival int64, err error) {
	g, err := l.acquire(ctx, &Slot{l: l, id: holder}, true)
	return g.held, g.try.Arrival, err
}

// Leave is what a waiter that gives up runs: it leaves the queue and
// hands on whatever it was handed meanwhile.
func Leave(ctx context.Context, l *Limiter, holder string) error {
	_, err := l.release(ctx, release{holder: holder, outcome: outcomeIgnore})
	return err
}

// AcquireSHA is the SHA of acquire.lua, to cut the replies of tries alone.
func AcquireSHA() string { return acquireScript.Hash() }

// ClaimSHA is the SHA of claim.lua, to cut the replies of claims alone.
func ClaimSHA() string { return claimScript.Hash() }

// ReleaseSHA is the SHA of release.lua, to tell its runs from others.
func ReleaseSHA() string { return releaseScript.Hash() }
