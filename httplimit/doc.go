// Package httplimit is net/http middleware that keeps requests under rate
// limits (package ratelimit) and a concurrency limit (slotlimit.Limiter),
// shared by every instance of a service through one Redis, and tells
// clients where they stand in the IETF RateLimit-Policy and RateLimit
// headers (draft-ietf-httpapi-ratelimit-headers).
//
//	rate, err := ratelimit.New(client, ratelimit.Config{})
//	...
//	m, err := httplimit.New(httplimit.Config{
//		Rate: rate,
//		Policies: []httplimit.Policy{{
//			Name:  "per-user",
//			Limit: ratelimit.PerSecond(10),
//			Key:   func(r *http.Request) string { return "rl:user:" + userOf(r) },
//		}},
//		Concurrency: backendSlots, // a *slotlimit.Limiter
//		Wait:        200 * time.Millisecond,
//	})
//	...
//	http.ListenAndServe(addr, m.Handler(mux))
//
// A request goes through the rate policies first, all of them in one
// all-or-nothing ratelimit.AllowAll, then takes a concurrency slot:
//
//   - A rate refusal answers 429 Too Many Requests, with Retry-After set to
//     the seconds after which the same request would be allowed (rounded
//     up), and counts nothing on any policy.
//   - A concurrency refusal answers 503 Service Unavailable, with
//     Retry-After from slotlimit.Result.RetryAfter. With Config.Wait the
//     request first waits up to Wait for a slot, woken by a release; the
//     request's own context still bounds the wait. A request refused here
//     has counted against the rate policies: it was an attempt.
//   - When Redis fails, Config.FailOpen chooses: serve the request without
//     the limit that failed, or answer 503 Service Unavailable.
//   - When the reply to a rate check is lost and the Redis client sends it
//     again (go-redis does, MaxRetries times by default), the request is
//     counted again on its policies, as ratelimit.Limiter.AllowAll says:
//     it may be refused early with 429, but no policy ever serves more
//     than its limit. A concurrency slot's acquire and release keep their
//     own promise under a re-send: the request holds one slot, and frees
//     it.
//
// Every answer that went through a policy carries RateLimit-Policy (each
// policy's quota q over its window w in seconds; the concurrency policy's
// q with qu="concurrent-requests") and RateLimit (what remains, r, and
// for rate policies the seconds until the key is back to full, t).
package httplimit
