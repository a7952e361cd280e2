package ratelimit

import (
	"math/bits"
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

	// FixedWindow: the window in ms and the Rate.
	window, rate int64

	// GCRA: one event's share of a period, Period/Rate, is cost/den µs in
	// lowest terms (den is 1 when the share is a whole number of µs), and
	// tau, a full burst's share, is Burst×cost/den µs.
	cost, den uint64
	tau       span
}

// A span is a time of at most 2^53µs, kept exactly as whole µs and a
// remainder of rem/den µs, 0 <= rem < den, den being its params' den.
type span struct{ us, rem uint64 }

// less reports whether s is shorter than t.
func (s span) less(t span) bool {
	return s.us < t.us || s.us == t.us && s.rem < t.rem
}

// ceil is s in µs, rounded up.
func (s span) ceil() int64 {
	if s.rem > 0 {
		return int64(s.us) + 1
	}
	return int64(s.us)
}

// share is n events' share of a period, n×cost/den µs; n is at most
// Burst, so that it is at most tau.
func (p params) share(n int64) span {
	hi, lo := bits.Mul64(uint64(n), p.cost)
	us, rem := bits.Div64(hi, lo, p.den) // the quotient is at most tau.us
	return span{us, rem}
}

// add is s + t, their remainders over p.den.
func (p params) add(s, t span) span {
	if t.rem >= p.den-s.rem {
		return span{s.us + t.us + 1, t.rem - (p.den - s.rem)}
	}
	return span{s.us + t.us, s.rem + t.rem}
}

// sub is s - t, for t at most s.
func (p params) sub(s, t span) span {
	if s.rem < t.rem {
		return span{s.us - t.us - 1, s.rem + (p.den - t.rem)}
	}
	return span{s.us - t.us, s.rem - t.rem}
}

// events is how many whole events' shares fit in s: s / (cost/den),
// rounded down, for s at most tau, so at most Burst.
func (p params) events(s span) int64 {
	hi, lo := bits.Mul64(s.us, p.den)
	lo, carry := bits.Add64(lo, s.rem, 0)
	n, _ := bits.Div64(hi+carry, lo, p.cost) // s×den/cost <= Burst
	return int64(n)
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
		return params{limit: l, window: l.Period.Milliseconds(), rate: l.Rate}, nil
	case GCRA:
		period := uint64(l.Period.Microseconds())
		if uint64(l.Rate) > period {
			return params{}, invalid(ErrInvalidLimit, "%v: Period/Rate must be at least 1µs", l)
		}
		l.Burst = l.burst()
		if spacing := (period + uint64(l.Rate) - 1) / uint64(l.Rate); l.Burst == 1 && 99*uint64(l.Rate)*spacing > 100*period {
			// Events at whole µs at least spacing apart: Period/spacing per
			// Period, more than 1% below Rate (see InexactLimitError).
			nearest := l
			nearest.Burst = 2
			return params{}, &InexactLimitError{Limit: l, Spacing: time.Duration(spacing) * time.Microsecond, Nearest: nearest}
		}
		g := gcd(period, uint64(l.Rate))
		p := params{limit: l, cost: period / g, den: uint64(l.Rate) / g}
		// A full burst, Burst×cost/den µs, must be at most 2^50µs:
		// Burst×cost <= 2^50×den, compared in 128 bits.
		hi, lo := bits.Mul64(uint64(l.Burst), p.cost)
		maxHi, maxLo := bits.Mul64(uint64(MaxBurstTime.Microseconds()), p.den)
		if hi > maxHi || hi == maxHi && lo > maxLo {
			return params{}, invalid(ErrInvalidLimit, "%v: a full burst must refill within %v", l, MaxBurstTime)
		}
		p.tau = p.share(l.Burst)
		return p, nil
	}
	return params{}, invalid(ErrInvalidLimit, "%v: unknown Algorithm", l)
}

// gcd is the greatest common divisor of a and b, both above 0.
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Validate returns nil when l can be kept, and otherwise the error,
// matching ErrInvalidLimit, that AllowN would return for it. It sends
// nothing, for callers that check their limits at start-up.
func (l Limit) Validate() error {
	_, err := l.check()
	return err
}
