package recent

import (
	"context"
	_ "embed"
	"math"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation is one Lua script, run with EVALSHA, and EVAL when the
// server answers NOSCRIPT. Every script takes the list's one key and
// includes lib.lua, which defines the scores. The Go side of each script,
// its arguments and the decoding of its reply, is the method below it.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/add.lua
	addLua    string
	addScript = script.New(addLua, lib)

	//go:embed scripts/items.lua
	itemsLua    string
	itemsScript = script.New(itemsLua, lib)

	//go:embed scripts/len.lua
	lenLua    string
	lenScript = script.New(lenLua, lib)

	//go:embed scripts/remove.lua
	removeLua    string
	removeScript = script.New(removeLua, lib)
)

// add runs add.lua: ARGV -Max-1, MaxAge, the expiry, then the values;
// the reply is 1.
func (l *List) add(ctx context.Context, values []string) error {
	args := make([]any, 0, 3+len(values))
	args = append(args, l.trim, l.maxAge, l.expiry)
	for _, v := range values {
		args = append(args, v)
	}
	reply, err := l.run(ctx, "add", addScript, args...)
	if err != nil {
		return err
	}
	if reply != int64(1) {
		return l.fail(ctx, "add", callerr.UnexpectedReply(reply))
	}
	return nil
}

// remove runs remove.lua: ARGV -Max-1, MaxAge, then the values; the reply
// is how many of them were in the list.
func (l *List) remove(ctx context.Context, values []string) (int64, error) {
	args := make([]any, 0, 2+len(values))
	args = append(args, l.trim, l.maxAge)
	for _, v := range values {
		args = append(args, v)
	}
	reply, err := l.run(ctx, "remove", removeScript, args...)
	if err != nil {
		return 0, err
	}
	n, ok := reply.(int64)
	if !ok || n < 0 || n > int64(len(values)) {
		return 0, l.fail(ctx, "remove", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// len runs len.lua: ARGV MaxAge; the reply is the number of items not too
// old, which may exceed Max.
func (l *List) len(ctx context.Context) (int64, error) {
	reply, err := l.run(ctx, "len", lenScript, l.maxAge)
	if err != nil {
		return 0, err
	}
	n, ok := reply.(int64)
	if !ok || n < 0 {
		return 0, l.fail(ctx, "len", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// items runs items.lua: ARGV MaxAge, offset, count; the reply is value,
// score, value, score, ..., at most count pairs.
func (l *List) items(ctx context.Context, offset, count int64) ([]Item, error) {
	reply, err := l.run(ctx, "items", itemsScript, l.maxAge, offset, count)
	if err != nil {
		return nil, err
	}
	flat, ok := reply.([]any)
	if !ok || len(flat)%2 != 0 || int64(len(flat)) > 2*count {
		return nil, l.fail(ctx, "items", callerr.UnexpectedReply(reply))
	}
	items := make([]Item, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		value, ok1 := flat[i].(string)
		s, ok2 := flat[i+1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if !ok1 || !ok2 || err != nil {
			return nil, l.fail(ctx, "items", callerr.UnexpectedReply(reply))
		}
		items = append(items, Item{Value: value, At: scoreTime(f)})
	}
	return items, nil
}

// Scores are seconds with a binary fraction of 2^21 ticks, 2048 ticks a
// millisecond (see scripts/lib.lua).
const (
	ticksPerSecond = 1 << 21
	ticksPerMs     = 2048
)

// scoreTime is the time a score stands for, to the millisecond: a whole
// second, as a script that scores whole seconds writes, is that second. A score that is no
// time since 1970 (negative, or beyond the year 2106) is the zero time.
func scoreTime(score float64) time.Time {
	if !(score >= 0 && score < 1<<32) {
		return time.Time{}
	}
	sec := math.Floor(score)
	msInSec := math.Floor((score - sec) * ticksPerSecond / ticksPerMs)
	return time.UnixMilli(int64(sec)*1000 + int64(msInSec))
}
