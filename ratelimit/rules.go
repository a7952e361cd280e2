package ratelimit

import (
	"context"
	"strings"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// A Rule is one limit on one key, for AllowAll.
type Rule struct {
	Key   string
	Limit Limit
	N     int64 // events to count; 0 counts one
}

// AllowAll counts each rule's events against its limit if every rule
// allows them now, and otherwise counts none: all or nothing, in one
// script, so that, say, a user's 10 per second and its tenant's 1000 per
// minute are both kept, and a call the tenant refuses costs the user
// nothing. Each Result tells whether its own rule had room; Results.Allowed
// tells whether the events were counted.
//
// The keys must share one Redis Cluster hash slot, on every client, so
// that a program that works on one server works on a Cluster: give them
// a common hash tag, as "{tenant:7}" and "{tenant:7}:user:42". Keys in
// more than one slot get ErrCrossSlot with nothing sent. (Callers who
// cannot colocate their keys can call AllowN per key instead, which is
// not all or nothing: an earlier key counts its events even when a later
// one refuses.)
//
// It returns ErrInvalidLimit for no rules, and, with nothing sent, the
// errors AllowN returns for bad input, and ErrInvalidKey for a key that
// appears twice. A key of another type fails the call with WRONGTYPE and
// nothing is written to any key.
//
// A re-sent AllowAll (its reply lost, and the call sent again by the
// client) counts again, as AllowN does: the second run counts every
// rule's events again only if every rule still has room for them, and
// refuses otherwise. It can refuse early, but no rule is ever counted
// beyond its limit, and Results.Allowed always means the events were
// counted.
func (l *Limiter) AllowAll(ctx context.Context, rules []Rule) (Results, error) {
	if err := l.usable(ctx); err != nil {
		return nil, callerr.Op("ratelimit", "allow all", "", err)
	}
	if len(rules) == 0 {
		return nil, callerr.Op("ratelimit", "allow all", "", invalid(ErrInvalidLimit, "no rules"))
	}
	results := make(Results, len(rules))
	keys := make([]string, len(rules))
	args := make([]any, 0, replyLen*len(rules))
	seen := make(map[string]bool, len(rules))
	for i, rule := range rules {
		n := rule.N
		if n == 0 {
			n = 1
		}
		p, err := l.check(ctx, rule.Key, rule.Limit, n)
		if err != nil {
			return nil, callerr.Op("ratelimit", "allow all", rule.Key, err)
		}
		if seen[rule.Key] {
			return nil, callerr.Op("ratelimit", "allow all", rule.Key, invalid(ErrInvalidKey, "the key appears twice"))
		}
		seen[rule.Key] = true
		kind := "g"
		if p.limit.Algorithm == FixedWindow {
			kind = "w"
		}
		keys[i] = rule.Key
		args = append(args, kind, p.cost, p.tau, n)
		results[i].Limit = p.limit
	}
	name := strings.Join(keys, " ")
	if !together(l.client, keys) {
		return nil, callerr.Op("ratelimit", "allow all", name, ErrCrossSlot)
	}
	reply, err := allowAllScript.Run(ctx, l.client, keys, args...).Result()
	if err != nil {
		return nil, callerr.Call(ctx, "ratelimit", "allow all", name, err)
	}
	if err := decode(results, reply); err != nil {
		return nil, callerr.Op("ratelimit", "allow all", name, err)
	}
	return results, nil
}
