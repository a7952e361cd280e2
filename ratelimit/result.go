package ratelimit

import "time"

// Result is the outcome of one limit's check.
//
// The figures are the server's at the moment of the call. RetryAfter is
// exact when no one else counts events on the key meanwhile: the same
// call made that much later succeeds. It is Never (-1) when the call asked
// for more events than the limit can ever allow at once (n above Burst for
// GCRA, above Rate for FixedWindow): waiting will not help, and the call
// is refused at once. For FixedWindow, RetryAfter and ResetAfter are the
// time left in the current window. Limit is the limit the call was made
// with, with a GCRA Burst of 0 shown as Rate.
type Result struct {
	Allowed    bool          // all n events were allowed (nothing is counted when refused)
	Remaining  int64         // events that would still be allowed now
	RetryAfter time.Duration // when refused: wait this long before the same call can succeed; 0 when allowed
	ResetAfter time.Duration // until the key is back to its full allowance
	Limit      Limit
}

// Never is Result.RetryAfter for events that no wait can let through.
const Never time.Duration = -1

// Results are the outcomes of an AllowAll, one per rule, in order.
type Results []Result

// Allowed reports whether every rule allowed its events, in which case all
// of them were counted; when any refused, none was. It is false for no
// results.
func (rs Results) Allowed() bool {
	for _, r := range rs {
		if !r.Allowed {
			return false
		}
	}
	return len(rs) > 0
}

// RetryAfter is how long to wait before the same AllowAll can succeed,
// when no one else counts on its keys meanwhile: the longest RetryAfter of
// the rules, or Never (-1) when any rule can never allow its events. It
// is 0 when Allowed.
func (rs Results) RetryAfter() time.Duration {
	var most time.Duration
	for _, r := range rs {
		if r.RetryAfter == Never {
			return Never
		}
		most = max(most, r.RetryAfter)
	}
	return most
}
