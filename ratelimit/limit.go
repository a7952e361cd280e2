package ratelimit

import (
	"strconv"
	"time"
)

// MaxRate is the highest Limit.Rate and Limit.Burst, and the most events
// one call may ask for: the scripts count in Lua numbers, which are exact
// up to 2^53.
const MaxRate = 1 << 53

// MaxBurstTime is the longest time a limit's full allowance may take to
// come back: a GCRA limit's full burst (Burst×Period/Rate), a
// FixedWindow's Period. It is 2^50µs, about 35 years, which keeps the
// scripts' microsecond arithmetic exact.
const MaxBurstTime = time.Duration(1<<50) * time.Microsecond

// A Limit is Rate events per Period. The zero Limit is invalid.
type Limit struct {
	Rate      int64         // events per Period; >= 1
	Period    time.Duration // > 0; fractional rates: Rate 1, Period 3*time.Minute
	Burst     int64         // GCRA: most events at once; 0 means Rate
	Algorithm Algorithm     // GCRA, the zero value, or FixedWindow
}

// PerSecond returns a GCRA Limit of rate events per second, with bursts
// of up to rate.
func PerSecond(rate int64) Limit {
	return Limit{Rate: rate, Period: time.Second}
}

// PerMinute returns a GCRA Limit of rate events per minute, with bursts
// of up to rate.
func PerMinute(rate int64) Limit {
	return Limit{Rate: rate, Period: time.Minute}
}

// String describes the limit, as "10 per 1s (burst 10, gcra)" or
// "100 per 1m0s (fixed window)". A Burst of 0 is shown as Rate.
func (l Limit) String() string {
	s := strconv.FormatInt(l.Rate, 10) + " per " + l.Period.String() + " ("
	if l.Algorithm == FixedWindow {
		return s + "fixed window)"
	}
	return s + "burst " + strconv.FormatInt(l.burst(), 10) + ", " + l.Algorithm.String() + ")"
}

// burst is Burst, or Rate when Burst is 0.
func (l Limit) burst() int64 {
	if l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

// params is a checked Limit in the scripts' units.
type params struct {
	limit Limit // Burst filled in for GCRA
	// GCRA: cost is one event's share of a period in µs (Period/Rate,
	// rounded up), tau a full burst's (Burst×cost). FixedWindow: cost is
	// the window in ms, tau the Rate.
	cost, tau int64
}

// check validates l and returns it in the scripts' units, or an error
// matching ErrInvalidLimit.
func (l Limit) check() (params, error) {
	switch {
	case l.Rate < 1 || l.Rate > MaxRate:
		return params{}, invalid(ErrInvalidLimit, "%v: Rate must be 1 to %d", l, int64(MaxRate))
	case l.Period < time.Millisecond || l.Period%time.Millisecond != 0:
		return params{}, invalid(ErrInvalidLimit, "%v: Period must be a whole number of milliseconds, at least 1ms", l)
	case l.Burst < 0 || l.Burst > MaxRate:
		return params{}, invalid(ErrInvalidLimit, "%v: Burst must be 0 to %d", l, int64(MaxRate))
	}
	switch l.Algorithm {
	case FixedWindow:
		if l.Burst != 0 && l.Burst != l.Rate {
			return params{}, invalid(ErrInvalidLimit, "%v: a fixed window has no Burst of its own; Burst must be 0 or Rate", l)
		}
		if l.Period > MaxBurstTime {
			return params{}, invalid(ErrInvalidLimit, "%v: a window must end within %v", l, MaxBurstTime)
		}
		l.Burst = 0
		return params{limit: l, cost: l.Period.Milliseconds(), tau: l.Rate}, nil
	case GCRA:
		period := l.Period.Microseconds()
		if l.Rate > period {
			return params{}, invalid(ErrInvalidLimit, "%v: Period/Rate must be at least 1µs", l)
		}
		cost := (period + l.Rate - 1) / l.Rate
		l.Burst = l.burst()
		if l.Burst > MaxBurstTime.Microseconds()/cost {
			return params{}, invalid(ErrInvalidLimit, "%v: a full burst must refill within %v", l, MaxBurstTime)
		}
		return params{limit: l, cost: cost, tau: l.Burst * cost}, nil
	}
	return params{}, invalid(ErrInvalidLimit, "%v: unknown Algorithm", l)
}

// Validate returns nil when l can be kept, and otherwise the error,
// matching ErrInvalidLimit, that AllowN would return for it. It sends
// nothing, for callers that check their limits at start-up.
func (l Limit) Validate() error {
	_, err := l.check()
	return err
}
