package recent

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/record"
)

// boundsSuffix names the record of a list's bounds, beside its sorted set:
// "{recent:42}/recent:bounds".
const boundsSuffix = ":bounds"

// foreverOutlive is how long the record of a list that never lapses
// (neither TTL nor MaxAge) outlives the Add that wrote it: such a list
// outlives its Adds for ever, and its record is not kept that long.
const foreverOutlive = 24 * time.Hour

// recordBounds writes the list's bounds beside it, at most once a minute
// per List (record.Memo), so that an operator can read them. A failed
// write fails no call: the Add that follows meets the same Redis.
func (l *List) recordBounds(ctx context.Context) {
	outlive := l.cfg.expiry()
	if outlive == 0 {
		outlive = foreverOutlive
	}
	fields := url.Values{
		"max":    {strconv.FormatInt(l.cfg.Max, 10)},
		"maxage": {strconv.FormatInt(l.cfg.MaxAge.Milliseconds(), 10)},
	}
	l.memo.Write(ctx, l.base.Client, l.keys[0]+boundsSuffix, fields, record.TTL(outlive)) //nolint:errcheck // see above
}

// Recorded returns the bounds that the Lists adding to the Key last
// recorded: a Config with the Key, Max and MaxAge (0 for none) of the
// last List whose Add wrote them, and true; or the zero Config and false
// when none is recorded. It writes nothing.
//
// Each List records its bounds beside the list, with one SET on its
// first Add and at most once a minute after that, never on every call. So
// when Lists of different bounds add to one Key, the record holds one of
// them. The record lapses a minute after the list would (a TTL, or
// MaxAge), counted from the last Add that wrote it; for a list that never
// lapses (neither TTL nor MaxAge), a day after that Add. A list unused
// that long keeps its items, and Items reads them, but Recorded no longer
// knows its bounds.
func (l *List) Recorded(ctx context.Context) (Config, bool, error) {
	if err := l.check(ctx, "Recorded", nil); err != nil {
		return Config{}, false, err
	}
	v, err := record.Read(ctx, l.base.Client, l.keys[0]+boundsSuffix)
	if err != nil {
		return Config{}, false, errs.Call(ctx, "Recorded", l.cfg.Key, err)
	}
	most, err1 := strconv.ParseInt(v.Get("max"), 10, 64)
	age, err2 := strconv.ParseInt(v.Get("maxage"), 10, 64)
	if v == nil || err1 != nil || err2 != nil || most < 1 || age < 0 {
		return Config{}, false, nil
	}
	return Config{Key: l.cfg.Key, Max: most, MaxAge: time.Duration(age) * time.Millisecond}, true, nil
}
