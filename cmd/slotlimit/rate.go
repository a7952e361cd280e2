package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit/ratelimit"
)

// The commands of package ratelimit: rate show and rate reset. A limit is
// an argument of every call of the package, stored nowhere, so both take
// it as flags.

func rateFlags(fs *flag.FlagSet, c *cli) {
	fs.Int64Var(&c.rate, "rate", 0, "the limit's Rate: `N` events per period (required)")
	fs.DurationVar(&c.period, "period", time.Second, "the limit's Period")
	fs.Int64Var(&c.burst, "burst", 0, "the limit's Burst `N` (gcra); 0 means the rate")
	fs.StringVar(&c.algorithm, "algorithm", "gcra", "the limit's Algorithm `A`: gcra or fixed-window")
}

// rateLimit returns the limit that the flags give.
func (c *cli) rateLimit(cmd string) (ratelimit.Limit, error) {
	if c.rate == 0 {
		return ratelimit.Limit{}, usageErrorf("%s needs the limit, which Redis does not keep: -rate N [-period D] [-burst N] [-algorithm gcra|fixed-window]", cmd)
	}
	l := ratelimit.Limit{Rate: c.rate, Period: c.period, Burst: c.burst}
	switch c.algorithm {
	case "gcra":
		l.Algorithm = ratelimit.GCRA
	case "fixed-window", "fixed window", "fixed", "window":
		l.Algorithm = ratelimit.FixedWindow
	default:
		return ratelimit.Limit{}, usageErrorf("-algorithm %q: gcra or fixed-window", c.algorithm)
	}
	return l, l.Validate()
}

type rateJSON struct {
	Key          string `json:"key"`
	Limit        string `json:"limit"` // as Limit.String, "10 per 1s (burst 10, gcra)"
	Rate         int64  `json:"rate"`
	PeriodMillis int64  `json:"period_ms"`
	Burst        int64  `json:"burst"`
	Algorithm    string `json:"algorithm"`
	Remaining    int64  `json:"remaining"`
	OverLimit    bool   `json:"over_limit"`
	ResetMillis  int64  `json:"reset_after_ms"`
}

// rateState reads key's state under limit with AllowN of 0 events, which
// counts nothing. (On a FixedWindow count that a client left without an
// expiry, it sets the window as one, as every call on it does.)
func (c *cli) rateState(key string, limit ratelimit.Limit) (ratelimit.Result, error) {
	l, err := ratelimit.New(c.client, ratelimit.Config{})
	if err != nil {
		return ratelimit.Result{}, err
	}
	ctx, cancel := c.call()
	defer cancel()
	return l.AllowN(ctx, key, limit, 0)
}

func newRateJSON(key string, res ratelimit.Result) rateJSON {
	burst := res.Limit.Burst
	if res.Limit.Algorithm == ratelimit.FixedWindow {
		burst = res.Limit.Rate
	}
	return rateJSON{
		Key: key, Limit: res.Limit.String(), Rate: res.Limit.Rate, PeriodMillis: res.Limit.Period.Milliseconds(),
		Burst: burst, Algorithm: res.Limit.Algorithm.String(),
		Remaining: res.Remaining, OverLimit: !res.Allowed, ResetMillis: res.ResetAfter.Milliseconds(),
	}
}

// runRateShow prints the events the limit allows now on key, and when
// the key is back to its full allowance. A key with no event allowed now
// is the answer no.
func runRateShow(c *cli, args []string) error {
	key := args[0]
	limit, err := c.rateLimit("rate show")
	if err != nil {
		return err
	}
	res, err := c.rateState(key, limit)
	if err != nil {
		return err
	}
	if c.json {
		err = c.writeJSON(newRateJSON(key, res))
	} else {
		t := newTable(c.stdout, "RATE", display(key))
		t.row("limit", res.Limit)
		t.row("allowed now", plural(int(res.Remaining), "event"))
		if !res.Allowed {
			t.row("over limit", "yes: counted beyond this limit (by a higher one, or another algorithm)")
		}
		full := "now"
		if res.ResetAfter > 0 {
			full = "in " + left(res.ResetAfter)
		}
		t.row("full again", full)
		t.flush()
	}
	if err == nil && res.Remaining == 0 {
		return errNo
	}
	return err
}

// runRateReset deletes what the limit counts on key, with
// ratelimit.Reset, so that its next event finds the full allowance.
// Reset is safe to send again: it deletes again.
func runRateReset(c *cli, args []string) error {
	key := args[0]
	limit, err := c.rateLimit("rate reset")
	if err != nil {
		return err
	}
	before, err := c.rateState(key, limit)
	if err != nil {
		return err
	}
	l, err := ratelimit.New(c.client, ratelimit.Config{})
	if err != nil {
		return err
	}
	ctx, cancel := c.call()
	defer cancel()
	if err := l.Reset(ctx, key, limit); err != nil {
		return err
	}
	after, err := c.rateState(key, limit)
	if err != nil {
		return err
	}
	if c.json {
		return c.writeJSON(struct {
			rateJSON
			RemainingBefore int64 `json:"remaining_before"`
		}{newRateJSON(key, after), before.Remaining})
	}
	fmt.Fprintf(c.stdout, "reset %s, %v: %d events allowed before, %d now\n", display(key), after.Limit, before.Remaining, after.Remaining)
	return nil
}
