package httplimit

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/ratelimit"
)

// The header fields of draft-ietf-httpapi-ratelimit-headers, and
// Retry-After.
const (
	headerPolicy     = "RateLimit-Policy"
	headerRateLimit  = "RateLimit"
	headerRetryAfter = "Retry-After"
)

// ratePolicy is a rate policy's RateLimit-Policy item: its quota q over
// its window w, in whole seconds. A Period that is not a whole number of
// seconds is said over one second when it divides one, and otherwise as
// Rate over the Period rounded up, which asks the client for no more than
// the limit allows.
func ratePolicy(name string, l ratelimit.Limit) string {
	q, w := l.Rate, int64(math.Ceil(l.Period.Seconds()))
	if l.Period < time.Second && time.Second%l.Period == 0 {
		q, w = l.Rate*int64(time.Second/l.Period), 1
	}
	return strconv.Quote(name) + ";q=" + strconv.FormatInt(q, 10) + ";w=" + strconv.FormatInt(w, 10)
}

// rateItem is a rate policy's RateLimit item: r events remain, and the
// key is back to full in t seconds, rounded up.
func rateItem(name string, res ratelimit.Result) string {
	return strconv.Quote(name) + ";r=" + strconv.FormatInt(res.Remaining, 10) + ";t=" + strconv.FormatInt(seconds(res.ResetAfter), 10)
}

// concurrencyPolicy is the concurrency limit's RateLimit-Policy item.
func concurrencyPolicy(name string, limit int64) string {
	return strconv.Quote(name) + ";q=" + strconv.FormatInt(limit, 10) + `;qu="concurrent-requests"`
}

// concurrencyItem is the concurrency limit's RateLimit item: r slots are
// free.
func concurrencyItem(name string, free int64) string {
	return strconv.Quote(name) + ";r=" + strconv.FormatInt(max(free, 0), 10)
}

// retryAfter sets Retry-After to d in seconds, rounded up; it sets
// nothing for a negative d (ratelimit.Never: no wait will do).
func retryAfter(h http.Header, d time.Duration) {
	if d >= 0 {
		h.Set(headerRetryAfter, strconv.FormatInt(max(seconds(d), 1), 10))
	}
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
