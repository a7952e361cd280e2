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
// server answers NOSCRIPT. Every script includes lib.lua, which defines
// the scores. This file is the Go side of each script's contract: its
// keys, the building of its arguments and the one decoder of its reply;
// the Lua side is the header of each file in scripts/. Every reply is or
// begins with a status, 1.
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

// The keys every script takes, in their order: the list's one key.
const (
	keyList = iota
	listKeys
)

// listKeyNames returns the keys of the list named key, in the scripts'
// order.
func listKeyNames(key string) []string {
	keys := make([]string, listKeys)
	keys[keyList] = listKey(key)
	return keys
}

// statusOK is the status that begins every script's reply.
const statusOK = int64(1)

// status splits a script's reply into its status, which must be
// statusOK, and the rest; it reports false for a reply of another form.
func status(reply any) ([]any, bool) {
	r, ok := reply.([]any)
	if !ok || len(r) == 0 || r[0] != statusOK {
		return nil, false
	}
	return r[1:], true
}

// add runs add.lua: ARGV -Max-1, MaxAge, the expiry, then the values;
// the reply is the status 1 alone, which costs the server less than a
// table.
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
	if reply != statusOK {
		return l.fail(ctx, "add", callerr.UnexpectedReply(reply))
	}
	return nil
}

// remove runs remove.lua: ARGV -Max-1, MaxAge, then the values; the reply
// is {1, how many of them were in the list}.
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
	n, ok := decodeCount(reply)
	if !ok || n > int64(len(values)) {
		return 0, l.fail(ctx, "remove", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// len runs len.lua: ARGV MaxAge; the reply is {1, the number of items not
// too old}, which may exceed Max.
func (l *List) len(ctx context.Context) (int64, error) {
	reply, err := l.run(ctx, "len", lenScript, l.maxAge)
	if err != nil {
		return 0, err
	}
	n, ok := decodeCount(reply)
	if !ok {
		return 0, l.fail(ctx, "len", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// decodeCount decodes the reply {1, n} of remove.lua and len.lua, n not
// negative.
func decodeCount(reply any) (int64, bool) {
	rest, ok := status(reply)
	if !ok || len(rest) != 1 {
		return 0, false
	}
	n, ok := rest[0].(int64)
	return n, ok && n >= 0
}

// items runs items.lua: ARGV MaxAge, offset, count; the reply is {1,
// value, score, value, score, ...}, at most count pairs.
func (l *List) items(ctx context.Context, offset, count int64) ([]Item, error) {
	reply, err := l.run(ctx, "items", itemsScript, l.maxAge, offset, count)
	if err != nil {
		return nil, err
	}
	items, ok := decodeItems(reply, count)
	if !ok {
		return nil, l.fail(ctx, "items", callerr.UnexpectedReply(reply))
	}
	return items, nil
}

// decodeItems decodes the reply of items.lua, of at most count items.
func decodeItems(reply any, count int64) ([]Item, bool) {
	flat, ok := status(reply)
	if !ok || len(flat)%2 != 0 || int64(len(flat)) > 2*count {
		return nil, false
	}
	items := make([]Item, 0, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		value, ok1 := flat[i].(string)
		s, ok2 := flat[i+1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if !ok1 || !ok2 || err != nil {
			return nil, false
		}
		items = append(items, Item{Value: value, At: scoreTime(f)})
	}
	return items, true
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
