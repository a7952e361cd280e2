package ratelimit

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
)

// The rate record: a Limiter keeps, beside each key it is used on, the
// limit it was last used with, so that an operator reads it without being
// told (Limiter.Limit, and the slotlimit command's rate show). It is a
// string of URL query form, "algorithm=gcra&rate=10&period=1000&burst=10"
// (period in ms), at "{k}/ratelimit:rate" beside a key k without a hash
// tag, "{t}:k:ratelimit:rate" beside a key "{t}:k". A Limiter writes it at
// most once a minute per key, inside the script call of an Allow or
// AllowN when it is due (an AllowAll sends it as a SET of its own before
// its script), and it expires a minute after the key's data can last
// lapse: the full burst's time after the write for GCRA, the Period for a
// FixedWindow. A call that Redis refused for the record, before it ran
// anything (an ACL that grants the user's keys but not the record's), is
// sent again at once without it, and the record waits its minute
// (Limiter.recordFailed); a refused SET of an AllowAll fails nothing.

// recordSuffix names the rate record beside a key.
const recordSuffix = suffix + ":rate"

// recordKey returns the name of the rate record beside key, or "" for a
// key that has no names beside it (a FixedWindow key with a '}' but no
// hash tag, which keeps no record).
func recordKey(key string) string {
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return ""
	}
	return prefix + recordSuffix
}

// The algorithm field's values.
const (
	recordGCRA   = "gcra"
	recordWindow = "fixed-window"
)

// recordFields returns the rate record of p's limit.
func recordFields(p params) url.Values {
	algorithm := recordGCRA
	burst := p.limit.Burst
	if p.limit.Algorithm == FixedWindow {
		algorithm, burst = recordWindow, p.limit.Rate
	}
	return url.Values{
		"algorithm": {algorithm},
		"rate":      {strconv.FormatInt(p.limit.Rate, 10)},
		"period":    {strconv.FormatInt(p.limit.Period.Milliseconds(), 10)},
		"burst":     {strconv.FormatInt(burst, 10)},
	}
}

// recordTTL returns the expiry of a rate record of p's limit written now:
// a minute after the longest its data lives, a full burst's time for
// GCRA, the Period for a FixedWindow.
func recordTTL(p params) time.Duration {
	outlive := p.limit.Period
	if p.limit.Algorithm == GCRA {
		outlive = time.Duration(p.tau.ceil()) * time.Microsecond
	}
	return record.TTL(outlive)
}

// recordArgs returns the record's key and the two script arguments that
// write it (its value and expiry in ms), when the record of key is due,
// and counts it written; "" when it is not due or key keeps none. A call
// that fails hands its error to l.recordFailed.
func (l *Limiter) recordArgs(key string, p params) (name string, value, ttl any) {
	name = recordKey(key)
	if name == "" || !l.memo.Due(name) {
		return "", nil, nil
	}
	return name, recordFields(p).Encode(), strconv.FormatInt(recordTTL(p).Milliseconds(), 10)
}

// parseRecord returns the Limit of a rate record, its Burst filled in for
// GCRA and 0 for a FixedWindow, or false when the record is not one a
// Limiter writes.
func parseRecord(fields url.Values) (Limit, bool) {
	rate, err1 := strconv.ParseInt(fields.Get("rate"), 10, 64)
	period, err2 := strconv.ParseInt(fields.Get("period"), 10, 64)
	burst, err3 := strconv.ParseInt(fields.Get("burst"), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || period > int64(MaxBurstTime/time.Millisecond) {
		return Limit{}, false
	}
	limit := Limit{Rate: rate, Period: time.Duration(period) * time.Millisecond, Burst: burst}
	switch fields.Get("algorithm") {
	case recordGCRA:
	case recordWindow:
		limit.Algorithm, limit.Burst = FixedWindow, 0 // the form a FixedWindow Limit is checked to
	default:
		return Limit{}, false
	}
	return limit, limit.Validate() == nil
}

// Limit returns the limit that a Limiter last used on key, as the rate
// record beside key holds it (a GCRA Limit with its Burst filled in, a
// FixedWindow with a Burst of 0) (see the package documentation), or the
// zero Limit when there is none: no Limiter used key within the last
// minute and the time its data lives, or the record lapsed with it. It
// reads one key and writes nothing. It returns ErrInvalidKey for an empty
// key, with nothing sent, an error for a record that is not one a Limiter
// writes, and one matching ErrOutcomeUnknown when Redis does not answer.
func (l *Limiter) Limit(ctx context.Context, key string) (Limit, error) {
	if err := l.check(ctx, "Limit", key); err != nil {
		return Limit{}, err
	}
	if fault := kernel.KeyFault(key); fault != "" && (key == "" || hashtag.Owned(key)) {
		return Limit{}, errs.Op("Limit", key, invalid(ErrInvalidKey, "the key %s", fault))
	}
	name := recordKey(key)
	if name == "" {
		return Limit{}, nil
	}
	fields, err := record.Read(ctx, l.base.Client, name)
	switch {
	case fields == nil && err != nil:
		return Limit{}, errs.Call(ctx, "Limit", key, err)
	case fields == nil:
		return Limit{}, nil
	}
	limit, ok := parseRecord(fields)
	if err != nil || !ok {
		return Limit{}, errs.Op("Limit", key, errBadRecord)
	}
	return limit, nil
}

// writeRecords writes the rate records of call's rules that are due, in
// one pipeline, for AllowAll, whose script keeps to its rules' keys. Its
// errors never fail the AllowAll: a write that did not reach Redis is
// forgotten, to be made on a later call, and one that Redis refused (an
// ACL without the record's key) waits its minute (record.Memo.Failed).
func (l *Limiter) writeRecords(ctx context.Context, call allCall) {
	var names []string
	var sets []*redis.StatusCmd
	pipe := l.base.Client.Pipeline()
	for i, key := range call.keys {
		name := recordKey(key)
		if name == "" || !l.memo.Due(name) {
			continue
		}
		sets = append(sets, pipe.Set(ctx, name, recordFields(call.params[i]).Encode(), recordTTL(call.params[i])))
		names = append(names, name)
	}
	if len(names) == 0 {
		return
	}
	_, _ = pipe.Exec(ctx)
	for i, name := range names {
		l.memo.Failed(name, sets[i].Err())
	}
}

// Inspect reads key's state under limit, as AllowN of 0 events reports
// it (Allowed is false only when the key is over its limit), and writes
// nothing: not the rate record, and not the window's expiry that every
// call gives a count found without one. It is for operators and tools,
// such as a read-only Redis user. It returns AllowN's errors for bad
// input, with nothing sent, a Redis error reply (WRONGTYPE for a key of
// another type), or an error matching ErrOutcomeUnknown; call it again
// then.
func (l *Limiter) Inspect(ctx context.Context, key string, limit Limit) (Result, error) {
	if err := l.check(ctx, "Inspect", key); err != nil {
		return Result{}, err
	}
	data, p, err := prepare(key, limit, 0)
	if err != nil {
		return Result{}, errs.Op("Inspect", key, err)
	}
	res, err := l.inspect(ctx, data, p)
	if err != nil {
		return Result{}, errs.Call(ctx, "Inspect", key, err)
	}
	return res, nil
}
