package slotlimit

import "time"

// Result is the outcome of an acquire.
type Result struct {
	// Acquired reports whether the caller holds a slot after the call.
	Acquired bool

	// Count is the number of slots in use right after the call,
	// including the caller's when Acquired.
	Count int64

	// Limit is the limit the call was made with.
	Limit int64

	// ExpiresAt is when the caller's slot lapses unless it is renewed or
	// released, by the Redis server's clock. It is zero when not Acquired.
	ExpiresAt time.Time

	// EarliestLapse is set when not Acquired: the time until the earliest
	// lease lapses (for a Counter, until the whole key expires), by the
	// server's clock. It is when a unit frees at the latest if no holder
	// renews and no one else takes it, not when one will free: a release
	// can free one at any moment, and with long leases that are renewed it
	// may be far off. It is 0 when Acquired or when no lapse is scheduled.
	// For when to come back, see RetryAfter.
	EarliestLapse time.Duration

	// Weight is the number of units the caller holds after the call: n
	// when Acquired, and when a re-weigh was refused, the units it still
	// holds from before. A Counter's Weight is 1 when Acquired.
	Weight int64
}

// RetryAfter is when a refused caller should try again, in a form that
// suits an HTTP Retry-After header: 0 when Acquired; otherwise
// EarliestLapse when that is under a second, and one second when it is
// not, since units are freed by releases at moments no one can foresee
// and a second is the least a Retry-After header can say. Format it for
// the header as strconv.Itoa(int(math.Ceil(res.RetryAfter().Seconds()))).
//
// Choose by who waits. A caller in this process should not sleep on
// either figure: Acquire waits and is woken by the release itself. A
// client that cannot be woken, such as an HTTP client told 429, comes
// back after RetryAfter. EarliestLapse is for monitoring and for callers
// that know their holders release only by lapsing.
func (r Result) RetryAfter() time.Duration {
	switch {
	case r.Acquired:
		return 0
	case r.EarliestLapse > 0 && r.EarliestLapse < time.Second:
		return r.EarliestLapse
	}
	return time.Second
}

// Holder is one live lease.
type Holder struct {
	ID        string    // the holder ID passed to TryAcquire or Acquire
	ExpiresAt time.Time // when the lease lapses unless renewed, by the Redis server's clock
	Weight    int64     // units held: 1, or n from TryAcquireN and AcquireN
}
