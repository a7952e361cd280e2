package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/recentload"
	"github.com/slotlimit/slotlimit/recent"
)

// seedAdd is the classic script, verbatim, as its Java string concatenation
// makes it: ZADD the member at the score, ZCARD, and ZREMRANGEBYRANK the
// oldest above the max. KEYS[1] the list; ARGV[1] the member, ARGV[2] the
// score (the client's clock in whole seconds), ARGV[3] the max.
const seedAdd = classic.RecentAdd

// Names of the variants, in the order of the report.
const (
	nameSeed  = "the classic script, verbatim, EVALSHA"
	nameList  = "slotlimit recent List.Add, one value"
	nameLPush = "LPUSH + LTRIM, one pipeline"
)

// A variant is one way of adding a value to a user's list of the newest
// max, on lists of its own: worker w's lists are keys[w], and its i-th call
// adds the value numbered i to its list i mod users.
type variant struct {
	name     string
	commands []string // its top-level commands, as INFO commandstats names them
	sorted   bool     // its lists are sorted sets; else Redis lists
	keys     [][]string
	stored   func(key string) string // the Redis key the list named key is kept at; nil: key
	workers  []worker
	// add adds value to worker w's list u, whose key is key.
	add func(ctx context.Context, w, u int, key, value string) error
}

// A worker is one worker's count of calls begun. Only worker w reads or
// writes workers[w] while the load runs.
type worker struct {
	calls int64
	_     [56]byte // keeps workers off each other's cache lines
}

// value is the i-th value of worker w: 18 bytes, the same for every
// variant, and never added twice to one variant's lists.
var value = recentload.Value

// call is the variant's call for worker w, for harness.Drive.
func (v *variant) call(ctx context.Context, w int) error {
	s := &v.workers[w]
	i := s.calls
	s.calls++
	u := int(i % int64(len(v.keys[w])))
	return v.add(ctx, w, u, v.keys[w][u], value(w, i))
}

// caller returns the variant as a harness.Caller.
func (v *variant) caller() harness.Caller {
	return harness.Caller{Name: v.name, Commands: v.commands, Call: v.call}
}

func (b *bench) callers() []harness.Caller {
	out := make([]harness.Caller, len(b.variants))
	for i, v := range b.variants {
		out[i] = v.caller()
	}
	return out
}

// allKeys returns the Redis keys of the variant's lists, worker by worker.
func (v *variant) allKeys() []string {
	var out []string
	for _, ks := range v.keys {
		for _, key := range ks {
			if v.stored != nil {
				key = v.stored(key)
			}
			out = append(out, key)
		}
	}
	return out
}

func (b *bench) newVariant(name, tag string, sorted bool, commands []string, add func(ctx context.Context, w, u int, key, value string) error) *variant {
	v := &variant{name: name, commands: commands, sorted: sorted, keys: make([][]string, b.Workers), workers: make([]worker, b.Workers), add: add}
	for w := range v.keys {
		v.keys[w] = make([]string, b.users)
		for u := range v.keys[w] {
			v.keys[w][u] = b.Key(tag + ":" + strconv.Itoa(w) + ":" + strconv.Itoa(u))
		}
	}
	return v
}

// newVariants returns the variants, in the order of the report, the
// classic first.
func (b *bench) newVariants() ([]*variant, error) {
	c := b.Client
	max := strconv.FormatInt(b.max, 10)
	seed := b.newVariant(nameSeed, "seed", true, []string{"evalsha"}, func(ctx context.Context, _, _ int, key, value string) error {
		return c.EvalSha(ctx, b.seed.SHA, []string{key}, value, time.Now().Unix(), max).Err()
	})
	var lists [][]*recent.List
	list := b.newVariant(nameList, "list", true, []string{"evalsha"}, func(ctx context.Context, w, u int, _, value string) error {
		return lists[w][u].Add(ctx, value)
	})
	list.stored = func(key string) string { return "{" + key + "}/recent" } // the keys have no hash tag
	lists = make([][]*recent.List, b.Workers)
	for w, ks := range list.keys {
		lists[w] = make([]*recent.List, len(ks))
		for u, key := range ks {
			l, err := recent.New(c, recent.Config{Key: key, Max: b.max})
			if err != nil {
				return nil, fmt.Errorf("-max: %w", err)
			}
			lists[w][u] = l
		}
	}
	last := b.max - 1
	lpush := b.newVariant(nameLPush, "lpush", false, []string{"lpush", "ltrim"}, func(ctx context.Context, _, _ int, key, value string) error {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.LPush(ctx, key, value)
			p.LTrim(ctx, key, 0, last)
			return nil
		})
		return err
	})
	return []*variant{seed, list, lpush}, nil
}

// fill fills every list of every variant with max values, one per call
// through the variant's own Add, every worker its own lists at once, so
// that each Add of the load drops one item. It also puts every script in
// the server's cache and gives the pool its connections before the load.
func (b *bench) fill(ctx context.Context) error {
	perWorker := int64(b.users) * b.max
	for _, v := range b.variants {
		if err := recentload.Fill(ctx, b.Workers, perWorker, v.call); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		if err := b.checkFull(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// checkLists checks, after the load, that every list of every variant
// holds max items, no more and no fewer.
func (b *bench) checkLists(ctx context.Context) error {
	for _, v := range b.variants {
		if err := b.checkFull(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// checkFull returns an error unless each of v's lists holds max items.
func (b *bench) checkFull(ctx context.Context, v *variant) error {
	keys := v.allKeys()
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := b.Admin.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			if v.sorted {
				cmds[i] = p.ZCard(ctx, key)
			} else {
				cmds[i] = p.LLen(ctx, key)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", v.name, err)
	}
	for i, c := range cmds {
		if n := c.Val(); n != b.max {
			return fmt.Errorf("%s: %s holds %d items, want %d", v.name, keys[i], n, b.max)
		}
	}
	return nil
}
