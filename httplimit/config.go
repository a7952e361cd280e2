package httplimit

import (
	"net/http"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// errs is the package's error set.
var errs = kernel.NewErrors("httplimit")

// ErrInvalidConfig is returned by New when a Config cannot work: no
// policy and no Concurrency; Policies without Rate; a Policy without a
// Key function, with an invalid Limit, or with a Name that is empty, not
// a token of letters, digits and "-_.:", or used twice; or a negative
// Wait.
var ErrInvalidConfig = errs.InvalidConfig

// DefaultConcurrencyName is the policy name of the concurrency limit in
// the headers when Config.ConcurrencyName is empty.
const DefaultConcurrencyName = "concurrency"

// A Policy is one rate limit on requests, kept per key.
type Policy struct {
	// Name names the policy in the RateLimit-Policy and RateLimit
	// headers, as "per-user".
	Name string

	// Limit is the policy's rate.
	Limit ratelimit.Limit

	// Key returns the key the request counts on, such as "rl:user:" +
	// the user's ID, as ratelimit.Limiter.AllowN takes it (a FixedWindow
	// counts at the key itself, GCRA beside it); "" exempts the request
	// from the policy. The keys of one request's policies must share a
	// Redis Cluster hash slot (see ratelimit.Limiter.AllowAll): on a
	// Cluster, give them a common hash tag.
	Key func(r *http.Request) string
}

// Config describes a Middleware.
type Config struct {
	// Rate checks Policies; it is required when there are Policies.
	Rate     *ratelimit.Limiter
	Policies []Policy

	// Concurrency, when not nil, caps the requests in flight across every
	// instance that shares its key. Each request holds a lease under a
	// random holder ID, kept alive while the handler runs and released
	// when it returns.
	Concurrency *slotlimit.Limiter

	// ConcurrencyName names the concurrency limit in the headers; empty
	// means DefaultConcurrencyName.
	ConcurrencyName string

	// Wait is how long a request waits for a concurrency slot before it is
	// refused with 503; 0 refuses it at once.
	Wait time.Duration

	// FailOpen serves a request when Redis fails, without the limit that
	// failed; by default such a request is answered 503.
	FailOpen bool

	// OnError, when set, is told of every Redis failure, whichever way
	// FailOpen goes.
	OnError func(r *http.Request, err error)
}

// check validates c and fills in the defaults.
func (c Config) check() (Config, error) {
	if len(c.Policies) == 0 && c.Concurrency == nil {
		return c, errs.Config("no Policies and no Concurrency")
	}
	if len(c.Policies) > 0 && c.Rate == nil {
		return c, errs.Config("Policies need Rate")
	}
	if c.Wait < 0 {
		return c, errs.Config("Wait is %v, must not be negative", c.Wait)
	}
	if c.ConcurrencyName == "" {
		c.ConcurrencyName = DefaultConcurrencyName
	}
	names := map[string]bool{}
	if c.Concurrency != nil {
		names[c.ConcurrencyName] = true
		if !isToken(c.ConcurrencyName) {
			return c, errs.Config("ConcurrencyName %q is not a token of letters, digits and -_.:", c.ConcurrencyName)
		}
	}
	for _, p := range c.Policies {
		switch {
		case !isToken(p.Name):
			return c, errs.Config("policy name %q is not a token of letters, digits and -_.:", p.Name)
		case names[p.Name]:
			return c, errs.Config("policy name %q is used twice", p.Name)
		case p.Key == nil:
			return c, errs.Config("policy %q has no Key function", p.Name)
		}
		if err := p.Limit.Validate(); err != nil {
			return c, errs.Config("policy %q: %v", p.Name, err)
		}
		names[p.Name] = true
	}
	return c, nil
}

// isToken reports whether name is a non-empty run of letters, digits and
// "-_.:", which a structured-field string holds without escapes.
func isToken(name string) bool {
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return name != ""
}
