package adaptive

import (
	"context"
	"net/url"
	"strconv"

	"github.com/slotlimit/slotlimit/internal/record"
)

// boundsSuffix names the record of the Limiters' bounds, beside the
// limit: "{k}/adaptive:bounds".
const boundsSuffix = ":bounds"

// recordBounds writes the Limiter's Min and Max beside the limit, at most
// once a minute per Limiter (record.Memo), so that an operator can read
// them. A failed write fails no call: the try that follows meets the same
// Redis.
func (l *Limiter) recordBounds(ctx context.Context) {
	fields := url.Values{
		"min": {strconv.FormatInt(l.cfg.Min, 10)},
		"max": {strconv.FormatInt(l.cfg.Max, 10)},
	}
	l.memo.Write(ctx, l.base.Client, l.keys[keyState]+boundsSuffix, fields, record.TTL(StateTTL+l.cfg.TTL)) //nolint:errcheck // see above
}

// Recorded returns the Min and Max that the Limiters of the Key last
// recorded, and true; or zeros and false when none are recorded. It
// writes nothing.
//
// Each Limiter records its Min and Max beside the limit, with one SET on
// its first try for a slot and at most once a minute after that, never on
// every call, so when Limiters of different bounds share the Key, the
// record holds one of them. The record lapses a minute after the limit
// could (StateTTL and a lease's TTL after the try that wrote it).
func (l *Limiter) Recorded(ctx context.Context) (minimum, maximum int64, ok bool, err error) {
	if err := l.check(ctx, "Recorded"); err != nil {
		return 0, 0, false, err
	}
	v, err := record.Read(ctx, l.base.Client, l.keys[keyState]+boundsSuffix)
	if err != nil {
		return 0, 0, false, errs.Call(ctx, "Recorded", l.base.Key, err)
	}
	lo, err1 := strconv.ParseInt(v.Get("min"), 10, 64)
	hi, err2 := strconv.ParseInt(v.Get("max"), 10, 64)
	if v == nil || err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, false, nil
	}
	return lo, hi, true, nil
}
