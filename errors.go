package slotlimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrInvalidConfig is returned by New and NewCounter when the client
	// or the Config cannot work, and by every method of a zero or nil
	// Limiter, Counter or Lease, which were not made by New or NewCounter.
	// New and NewCounter refuse:
	//   - a nil client;
	//   - an empty Key;
	//   - a Limit below 1 or above MaxLimit;
	//   - a negative TTL, or one above 0 but under a millisecond;
	//   - a negative Replicas or ReplicaTimeout.
	// New also refuses a Key that has a '}' but no hash tag, since no tag
	// can keep its side keys in its cluster slot, and a Key with a hash
	// tag that ends in ':' or '/' and w, q, qd, qw or full:<digits>, since
	// that names a key beside another Limiter's lease set.
	ErrInvalidConfig = errors.New("slotlimit: invalid config")

	// ErrInvalidHolder is returned when a holder ID is empty or longer than
	// MaxHolderLen bytes. Nothing is sent to Redis.
	ErrInvalidHolder = errors.New("slotlimit: invalid holder")

	// ErrInvalidWeight is returned by TryAcquireN and AcquireN when n is
	// below 1 or above the Limit, which no wait could ever satisfy.
	// Nothing is sent to Redis.
	ErrInvalidWeight = errors.New("slotlimit: invalid weight")

	// ErrNotAcquired is returned by TryAcquireLease when the units it asks
	// for are not free, so that a refusal takes the error path:
	//
	//	lease, err := limiter.TryAcquireLease(ctx, 1)
	//	if errors.Is(err, slotlimit.ErrNotAcquired) {
	//		return errBusy // nothing is held
	//	}
	ErrNotAcquired = errors.New("slotlimit: not acquired")
)

// errUnusable is the error of every method of a zero or nil Limiter,
// Counter or Lease.
var errUnusable = fmt.Errorf("%w: not made by New or NewCounter", ErrInvalidConfig)

// sentNothing reports whether err is one that this package returns
// before anything is sent to Redis.
func sentNothing(err error) bool {
	return errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrInvalidHolder) || errors.Is(err, ErrInvalidWeight)
}

// MaxHolderLen is the longest holder ID accepted, in bytes.
const MaxHolderLen = 1024

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

func checkHolder(holder string) error {
	switch {
	case holder == "":
		return fmt.Errorf("%w: empty", ErrInvalidHolder)
	case len(holder) > MaxHolderLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidHolder, len(holder), MaxHolderLen)
	}
	return nil
}

func checkWeight(n, limit int64) error {
	if n < 1 || n > limit {
		return fmt.Errorf("%w: %d units, must be 1 to the limit %d", ErrInvalidWeight, n, limit)
	}
	return nil
}

// opError names the operation and the key, so that a WRONGTYPE reply or a
// connection error says which limiter it came from. It keeps err for errors.Is.
func opError(op, key string, err error) error {
	return fmt.Errorf("slotlimit: %s %q: %w", op, key, err)
}

// callError is opError for a call made with ctx: when ctx is done and err
// came from the connection (go-redis reports a ctx deadline as an i/o
// timeout when ContextTimeoutEnabled is set), the error matches ctx.Err()
// as well as err.
func callError(ctx context.Context, op, key string, err error) error {
	if ctxErr := ctxDone(ctx); ctxErr != nil && outcomeUnknown(err) && !errors.Is(err, ctxErr) {
		return fmt.Errorf("slotlimit: %s %q: %w: %w", op, key, ctxErr, err)
	}
	return opError(op, key, err)
}

// ctxDone is ctx.Err(), counting a deadline that has passed as exceeded
// even before ctx's own timer has fired: go-redis sets the connection's
// deadline to ctx's, and the read can time out a moment before ctx is
// marked done.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil
}
