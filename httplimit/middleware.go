package httplimit

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// releaseTimeout bounds the release of a request's concurrency slot after
// its handler returned; a slot whose release fails lapses with its lease.
const releaseTimeout = time.Second

// A Middleware keeps requests under its Config's limits. It is safe for
// concurrent use.
type Middleware struct {
	cfg  Config
	made bool // by New
}

// New returns a Middleware for cfg, or an error matching ErrInvalidConfig.
// It does not contact Redis.
func New(cfg Config) (*Middleware, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	return &Middleware{cfg: cfg, made: true}, nil
}

// Handler returns next behind the limits: a request is served by next
// only when every rate policy that applies to it allowed it and it holds a
// concurrency slot (see the package documentation for the answers
// otherwise). next's request context is cancelled if the request's
// concurrency lease is lost. The Handler of a nil or zero Middleware, not
// made by New, or of a nil next, answers every request 500 Internal
// Server Error, and checks no limit.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m == nil || !m.made {
			http.Error(w, ErrInvalidConfig.Error()+": not made by New", http.StatusInternalServerError)
			return
		}
		if next == nil {
			http.Error(w, ErrInvalidConfig.Error()+": the handler is nil", http.StatusInternalServerError)
			return
		}
		if !m.rate(w, r) {
			return
		}
		m.serve(w, r, next)
	})
}

// rate checks the rate policies that apply to r, sets their headers, and
// reports whether r may go on; when not, it has answered.
func (m *Middleware) rate(w http.ResponseWriter, r *http.Request) bool {
	var rules []ratelimit.Rule
	var names []string
	for _, p := range m.cfg.Policies {
		if key := p.Key(r); key != "" {
			rules = append(rules, ratelimit.Rule{Key: key, Limit: p.Limit})
			names = append(names, p.Name)
		}
	}
	if len(rules) == 0 {
		return true
	}
	results, err := m.cfg.Rate.AllowAll(r.Context(), rules)
	if err != nil {
		return m.failed(w, r, err)
	}
	h := w.Header()
	for i, res := range results {
		h.Add(headerPolicy, ratePolicy(names[i], res.Limit))
		h.Add(headerRateLimit, rateItem(names[i], res))
	}
	if results.Allowed() {
		return true
	}
	retryAfter(h, results.RetryAfter())
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
	return false
}

// serve runs next while r holds a concurrency slot, or at once without
// Concurrency.
func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	limiter := m.cfg.Concurrency
	if limiter == nil {
		next.ServeHTTP(w, r)
		return
	}
	holder := slotlimit.NewHolderID()
	res, err := m.acquire(r.Context(), holder)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client is gone; Acquire left nothing held
		}
		if m.failed(w, r, err) {
			next.ServeHTTP(w, r)
		}
		return
	}
	h := w.Header()
	name := m.cfg.ConcurrencyName
	h.Add(headerPolicy, concurrencyPolicy(name, res.Limit))
	h.Add(headerRateLimit, concurrencyItem(name, res.Limit-res.Count))
	if !res.Acquired {
		retryAfter(h, res.RetryAfter())
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	}
	lease := limiter.Lease(holder)
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), releaseTimeout)
		defer cancel()
		// A lease that lapsed while the handler ran is no Redis failure.
		if err := lease.Release(ctx); err != nil && !errors.Is(err, slotlimit.ErrNotHeld) {
			m.report(r, err)
		}
	}()
	next.ServeHTTP(w, r.WithContext(lease.KeepAlive(r.Context())))
}

// acquire takes a slot for holder: at once without Config.Wait, and
// otherwise waiting up to Wait, with one last try when the wait runs out
// so that a refusal carries a fresh Result.
func (m *Middleware) acquire(ctx context.Context, holder string) (slotlimit.Result, error) {
	limiter := m.cfg.Concurrency
	if m.cfg.Wait == 0 {
		return limiter.TryAcquire(ctx, holder)
	}
	wctx, cancel := context.WithTimeout(ctx, m.cfg.Wait)
	defer cancel()
	res, err := limiter.Acquire(wctx, holder)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return limiter.TryAcquire(ctx, holder)
	}
	return res, err
}

// failed handles a Redis failure: it reports err, and with FailOpen
// returns true; otherwise it answers 503 and returns false.
func (m *Middleware) failed(w http.ResponseWriter, r *http.Request, err error) bool {
	m.report(r, err)
	if m.cfg.FailOpen {
		return true
	}
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
	return false
}

func (m *Middleware) report(r *http.Request, err error) {
	if m.cfg.OnError != nil {
		m.cfg.OnError(r, err)
	}
}
