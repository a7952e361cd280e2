package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// The commands of package ratelimit: rate show and rate reset. They take
// the limit from the rate record a Limiter keeps beside each key it uses
// (ratelimit.Limiter.Limit); the flags, when -rate is given, override it.

func rateFlags(fs *flag.FlagSet, c *cli) {
	fs.Int64Var(&c.rate, "rate", 0, "the limit's Rate: `N` events per period (default: the limit recorded beside KEY)")
	fs.DurationVar(&c.period, "period", time.Second, "the limit's Period, with -rate")
	fs.Int64Var(&c.burst, "burst", 0, "the limit's Burst `N` (gcra), with -rate; 0 means the rate")
	fs.StringVar(&c.algorithm, "algorithm", "gcra", "the limit's Algorithm `A`, with -rate: gcra or fixed-window")
}

// rateLimit returns the limit of key: the flags' when -rate is given,
// else the one recorded beside key. It reads what key holds first
// (readClaim), so that a key that cannot be the limit's is explained in
// words, with exit code 1, before the limit is asked for: a key of
// another type, a string that is not a count, a Counter's count or a
// lock. A GCRA limit keeps its time beside key, never at it, so a GCRA
// limit recorded, or with its time beside key, is the answer whatever key
// holds. A key with neither a record nor data is "no rate limit at KEY";
// one with data but no record needs -rate.
func (c *cli) rateLimit(cmd, key string) (ratelimit.Limit, error) {
	var limit ratelimit.Limit
	if c.rate != 0 {
		l, err := c.flagLimit()
		if err != nil {
			return ratelimit.Limit{}, err
		}
		limit = l
	}
	ctx, cancel := c.call()
	defer cancel()
	recorded := false
	if c.rate == 0 {
		l, err := recordedRate(ctx, c.client, key)
		if err != nil {
			return ratelimit.Limit{}, c.wrongType(err, "rate limit", key)
		}
		limit, recorded = l, l.Rate != 0
	}
	cl, err := readClaim(ctx, c.client, key)
	if err != nil {
		return ratelimit.Limit{}, err
	}
	gcra := limit.Rate != 0 && limit.Algorithm == ratelimit.GCRA
	if (gcra && (recorded || cl.gcra)) || (limit.Rate == 0 && cl.gcra) {
		return c.askRate(cmd, key, limit)
	}
	// The limit's data is, or would be, at key itself.
	switch {
	case cl.kind == kindCounter || cl.kind == kindLock:
		fmt.Fprintln(c.stderr, claimed(cl, kindRate, key))
		return ratelimit.Limit{}, errNo
	case cl.typ == "none" && limit.Rate == 0:
		return ratelimit.Limit{}, c.none("rate limit", key)
	case cl.typ != "" && cl.typ != "none" && !cl.count:
		fmt.Fprintln(c.stderr, typeText(key, cl.typ, kindRate))
		return ratelimit.Limit{}, errNo
	}
	return c.askRate(cmd, key, limit)
}

// askRate returns limit, or, when it is not known, the usage error that
// asks for it.
func (c *cli) askRate(cmd, key string, limit ratelimit.Limit) (ratelimit.Limit, error) {
	if limit.Rate != 0 {
		return limit, nil
	}
	return ratelimit.Limit{}, usageErrorf("%s: %s holds data but no rate record (a Limiter writes one on its first call, and every minute while used); give the limit: -rate N [-period D] [-burst N] [-algorithm gcra|fixed-window]", cmd, display(key))
}

// flagLimit returns the limit that the flags give.
func (c *cli) flagLimit() (ratelimit.Limit, error) {
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

// recordedRate returns the limit recorded beside key, with
// ratelimit's Limiter.Limit, which writes nothing; the zero Limit when
// none is recorded.
func recordedRate(ctx context.Context, client redis.UniversalClient, key string) (ratelimit.Limit, error) {
	l, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		return ratelimit.Limit{}, err
	}
	return l.Limit(ctx, key)
}

// inspectRate reads key's state under limit with Limiter.Inspect, which
// writes nothing, so that a read-only Redis user can run it.
func inspectRate(ctx context.Context, client redis.UniversalClient, key string, limit ratelimit.Limit) (ratelimit.Result, error) {
	l, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		return ratelimit.Result{}, err
	}
	return l.Inspect(ctx, key, limit)
}

// resetRate deletes what limit counts on key, with ratelimit's
// Limiter.Reset, so that its next event finds the full allowance. Reset
// is safe to send again: it deletes again.
func resetRate(ctx context.Context, client redis.UniversalClient, key string, limit ratelimit.Limit) error {
	l, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		return err
	}
	return l.Reset(ctx, key, limit)
}

// rateState reads key's state under limit with inspectRate.
func (c *cli) rateState(key string, limit ratelimit.Limit) (ratelimit.Result, error) {
	ctx, cancel := c.call()
	defer cancel()
	res, err := inspectRate(ctx, c.client, key, limit)
	return res, c.wrongType(err, "rate limit", key)
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
	limit, err := c.rateLimit("rate show", key)
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
	limit, err := c.rateLimit("rate reset", key)
	if err != nil {
		return err
	}
	before, err := c.rateState(key, limit)
	if err != nil {
		return err
	}
	ctx, cancel := c.call()
	defer cancel()
	if err := resetRate(ctx, c.client, key, limit); err != nil {
		return c.wrongType(err, "rate limit", key)
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
