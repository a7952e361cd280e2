package ratelimit

import (
	"context"
	"strings"
)

// A Rule is one limit on one key, for AllowAll.
type Rule struct {
	Key   string // the key to count on, as Allow's key
	Limit Limit  // the limit on Key, as Allow's limit
	N     int64  // events to count; 0 counts one
}

// AllowAll counts every rule's events if every rule allows them now, and
// otherwise counts none, all in one script: Results.Allowed says which,
// and each Result whether its own rule had room. The keys must share one
// Redis Cluster hash slot, on every client (give them a common hash tag,
// as "{tenant:7}" and "{tenant:7}:user:42"), or it returns ErrCrossSlot.
//
// It returns AllowN's errors for bad input, ErrInvalidLimit for no rules
// and ErrInvalidKey for a key given twice, all with nothing sent; a Redis
// error reply, with no key written; or an error matching
// ErrOutcomeUnknown. A call sent again counts anew, as AllowN's does:
// no rule is ever counted beyond its limit.
func (l *Limiter) AllowAll(ctx context.Context, rules []Rule) (Results, error) {
	if l == nil || !l.base.Usable() || ctx == nil {
		return nil, l.check(ctx, "AllowAll", ruleKeys(rules))
	}
	call, bad, err := prepareAll(rules)
	if err != nil {
		err = errs.Op("AllowAll", bad, err)
		c := l.base.Begin("AllowAll", bad, "", 0, 0)
		c.Failed(ctx, err)
		return nil, err
	}
	name := call.keys[0]
	if len(call.keys) > 1 {
		name = strings.Join(call.keys, " ")
	}
	limit := capacity(call.results[0].Limit)
	c := l.base.Begin("AllowAll", name, "", call.units, limit)
	switch {
	case !together(l.base.Client, call.keys):
		err = errs.Op("AllowAll", name, ErrCrossSlot)
	default:
		l.writeRecords(ctx, call)
		err = errs.Call(ctx, "AllowAll", name, l.allowAll(ctx, call))
	}
	if err != nil {
		c.Failed(ctx, err)
		return nil, err
	}
	inUse := limit - call.results[0].Remaining
	if call.results.Allowed() {
		c.Acquired(ctx, inUse)
	} else {
		c.Refused(ctx, inUse)
	}
	return call.results, nil
}

// ruleKeys returns the keys of rules joined by spaces, as an AllowAll's
// errors and reports name them.
func ruleKeys(rules []Rule) string {
	if len(rules) == 1 {
		return rules[0].Key
	}
	keys := make([]string, len(rules))
	for i, rule := range rules {
		keys[i] = rule.Key
	}
	return strings.Join(keys, " ")
}

// An allCall is an AllowAll's checked input.
type allCall struct {
	keys, data []string // the rules' keys, and their data keys
	args       []any    // allow_all.lua's ARGV
	params     []params // each rule's limit in the scripts' units
	ns         []int64  // each rule's events
	results    Results  // each rule's Limit
	units      int64    // the events of every rule
}

// prepareAll checks the rules of an AllowAll and builds its call, or
// returns the error of bad input and the key of the rule it is in.
func prepareAll(rules []Rule) (call allCall, bad string, err error) {
	if len(rules) == 0 {
		return allCall{}, "", invalid(ErrInvalidLimit, "no rules")
	}
	call = allCall{
		keys:    make([]string, len(rules)),
		data:    make([]string, len(rules)),
		args:    make([]any, 0, 7*len(rules)),
		params:  make([]params, len(rules)),
		ns:      make([]int64, len(rules)),
		results: make(Results, len(rules)),
	}
	seen := make(map[string]bool, len(rules))
	for i, rule := range rules {
		n := rule.N
		if n == 0 {
			n = 1
		}
		data, p, err := prepare(rule.Key, rule.Limit, n)
		if err != nil {
			return allCall{}, rule.Key, err
		}
		if seen[rule.Key] {
			return allCall{}, rule.Key, invalid(ErrInvalidKey, "the key appears twice")
		}
		seen[rule.Key] = true
		call.keys[i], call.data[i] = rule.Key, data
		call.args = allowAllArgs(call.args, p, n)
		call.params[i], call.ns[i] = p, n
		call.results[i].Limit = p.limit
		call.units += n
	}
	return call, "", nil
}
