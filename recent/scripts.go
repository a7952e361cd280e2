package recent

import (
	"context"
	"embed"
	"math"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation is one Lua script, run with EVALSHA, and EVAL when the
// server answers NOSCRIPT. Every script includes lib.lua, which defines
// the scores. This file is the Go side of each script's contract: its
// keys, the building of its arguments and the one decoder of its reply;
// the Lua side is the header of each file in scripts/. Every reply
// begins with a status, 1, but add.lua's, which is the status alone.
var (
	//go:embed scripts
	scriptFiles embed.FS

	addScript    = script.Load(scriptFiles, "scripts/add.lua")
	itemsScript  = script.Load(scriptFiles, "scripts/items.lua")
	lenScript    = script.Load(scriptFiles, "scripts/len.lua")
	removeScript = script.Load(scriptFiles, "scripts/remove.lua")

	removeBatchScript = script.Load(scriptFiles, "scripts/remove_batch.lua")
)

// suffix is the name the list's sorted set has beside its Key (see
// Config.Key).
const suffix = "recent"

// The keys every script takes, in their order: the list's one key.
const (
	keyList = iota
	listKeys
)

// statusOK is the status that begins every script's reply.
const statusOK = int64(1)

// add makes an Add of values: through the Group of Adds, which sends it
// alone or with others (see sendAdds), or, when it does not coalesce, as
// its own script call.
func (l *List) add(ctx context.Context, values []string) error {
	var err error
	if l.coalesces(values, l.adds.Max) {
		_, err = l.adds.Do(ctx, struct{}{}, values)
	} else {
		err = l.runAdd(ctx, argv(values, l.trim, l.maxAge, l.expiry))
	}
	return errs.Call(ctx, "Add", l.cfg.Key, err)
}

// sendAdds sends a batch of Adds, each a call's values, as one run of
// add.lua with their values in turn: the values of Adds run one after the
// other in one microsecond, which is what add.lua makes of them (see its
// header). Each Add's answer is the status alone, the same for every
// member, on a first run and on a run sent again.
func (l *List) sendAdds(ctx context.Context, _ struct{}, batch [][]string) ([]struct{}, error) {
	if err := l.runAdd(ctx, batchArgs(batch, false, l.trim, l.maxAge, l.expiry)); err != nil {
		return nil, err
	}
	return make([]struct{}, len(batch)), nil
}

// runAdd runs add.lua: ARGV -Max-1, MaxAge, the expiry, then the values;
// the reply is the status 1 alone, not in a table, which costs the
// server less.
func (l *List) runAdd(ctx context.Context, args []any) error {
	reply, err := l.run(ctx, addScript, args)
	if err == nil && reply != statusOK {
		err = callerr.UnexpectedReply(reply)
	}
	return err
}

// remove makes a Remove of values, and returns how many of them were in
// the list: through the Group of Removes, which sends it alone or with
// others (see sendRemoves), or, when it does not coalesce, as its own
// script call.
func (l *List) remove(ctx context.Context, values []string) (int64, error) {
	var n int64
	var err error
	if l.coalesces(values, l.removes.Max) {
		n, err = l.removes.Do(ctx, struct{}{}, values)
	} else {
		n, err = l.runRemove(ctx, values)
	}
	return n, errs.Call(ctx, "Remove", l.cfg.Key, err)
}

// sendRemoves sends a batch of Removes, each a call's values: one alone
// as remove.lua, more as remove_batch.lua, which counts each in turn.
func (l *List) sendRemoves(ctx context.Context, _ struct{}, batch [][]string) ([]int64, error) {
	if len(batch) == 1 {
		n, err := l.runRemove(ctx, batch[0])
		if err != nil {
			return nil, err
		}
		return []int64{n}, nil
	}
	reply, err := l.run(ctx, removeBatchScript, batchArgs(batch, true, l.trim, l.maxAge))
	if err != nil {
		return nil, err
	}
	return decodeCounts(reply, batch)
}

// runRemove runs remove.lua: ARGV -Max-1, MaxAge, then the values; the
// reply is {1, how many of them were in the list}.
func (l *List) runRemove(ctx context.Context, values []string) (int64, error) {
	reply, err := l.run(ctx, removeScript, argv(values, l.trim, l.maxAge))
	if err != nil {
		return 0, err
	}
	return decodeCount(reply, int64(len(values)))
}

// len runs len.lua: ARGV MaxAge; the reply is {1, the number of items not
// too old}, which may exceed Max.
func (l *List) len(ctx context.Context) (int64, error) {
	reply, err := l.run(ctx, lenScript, []any{l.maxAge})
	var n int64
	if err == nil {
		n, err = decodeCount(reply, math.MaxInt64)
	}
	return n, errs.Call(ctx, "Len", l.cfg.Key, err)
}

// items runs items.lua: ARGV MaxAge, offset, count; the reply is {1,
// value, score, value, score, ...}, at most count pairs.
func (l *List) items(ctx context.Context, offset, count int64) ([]Item, error) {
	reply, err := l.run(ctx, itemsScript, []any{l.maxAge, offset, count})
	var items []Item
	if err == nil {
		items, err = decodeItems(reply, count)
	}
	return items, errs.Call(ctx, "Items", l.cfg.Key, err)
}

// run runs s on the list's key with ARGV args.
func (l *List) run(ctx context.Context, s *script.Script, args []any) (any, error) {
	return l.base.Runner.Run(ctx, s, l.keys, args...).Result()
}

// argv returns head followed by values, a script's ARGV.
func argv(values []string, head ...any) []any {
	return appendValues(make([]any, 0, len(head)+len(values)), values, head...)
}

// appendValues appends head and then values to args.
func appendValues(args []any, values []string, head ...any) []any {
	args = append(args, head...)
	for _, v := range values {
		args = append(args, v)
	}
	return args
}

// batchArgs returns head followed by each call's values in turn, with
// each call's number of values before them when counted: a batch
// script's ARGV.
func batchArgs(batch [][]string, counted bool, head ...any) []any {
	n := len(head)
	for _, values := range batch {
		n += len(values)
		if counted {
			n++
		}
	}
	args := append(make([]any, 0, n), head...)
	for _, values := range batch {
		if counted {
			args = append(args, len(values))
		}
		args = appendValues(args, values)
	}
	return args
}

// decodeCount decodes the reply {1, n} of remove.lua and len.lua, n from
// 0 to most.
func decodeCount(reply any, most int64) (int64, error) {
	r := kernel.ReadReply(reply)
	n := r.Int(0)
	r.Want(r.Status() == statusOK && r.Len() == 1 && n >= 0 && n <= most)
	return n, r.Err()
}

// decodeCounts decodes the reply {1, n1, n2, ...} of remove_batch.lua:
// one count for each Remove of batch, from 0 to its number of values.
func decodeCounts(reply any, batch [][]string) ([]int64, error) {
	r := kernel.ReadReply(reply)
	r.Want(r.Status() == statusOK && r.Len() == len(batch))
	if err := r.Err(); err != nil {
		return nil, err
	}
	counts := make([]int64, len(batch))
	for i, values := range batch {
		counts[i] = r.Int(i)
		r.Want(counts[i] >= 0 && counts[i] <= int64(len(values)))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return counts, nil
}

// decodeItems decodes the reply of items.lua, of at most count items.
func decodeItems(reply any, count int64) ([]Item, error) {
	r := kernel.ReadReply(reply)
	r.Want(r.Status() == statusOK && r.Len()%2 == 0 && int64(r.Len()) <= 2*count)
	if err := r.Err(); err != nil {
		return nil, err
	}
	items := make([]Item, 0, r.Len()/2)
	for i := 0; i < r.Len(); i += 2 {
		value, score := r.String(i), r.String(i+1)
		f, err := strconv.ParseFloat(score, 64)
		r.Want(err == nil)
		items = append(items, Item{Value: value, At: scoreTime(f)})
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// A score is a time in microseconds since 1970, or, below 2^32, in
// seconds, with a binary fraction of 2^21 ticks, 2048 a millisecond (see
// scripts/lib.lua).
const (
	secondsBelow   = 1 << 32
	ticksPerSecond = 1 << 21
	ticksPerMs     = 2048
)

// scoreTime is the time a score stands for: to the microsecond, or, for
// a score in seconds, to the millisecond, a whole second, as a script
// that scores whole seconds writes, being that second. A score that is
// no such time (negative, or not below 2^53 microseconds) is the zero
// time.
func scoreTime(score float64) time.Time {
	switch {
	case score >= secondsBelow && score < 1<<53:
		return time.UnixMicro(int64(score))
	case !(score >= 0 && score < secondsBelow):
		return time.Time{}
	}
	sec := math.Floor(score)
	msInSec := math.Floor((score - sec) * ticksPerSecond / ticksPerMs)
	return time.UnixMilli(int64(sec)*1000 + int64(msInSec))
}
