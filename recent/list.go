package recent

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// MaxBatch bounds the values of one Add or Remove, so that one script
// call stays short.
const MaxBatch = 1000

// An Item is one entry of a list, as Items returns it.
type Item struct {
	// Value is the value added, byte for byte.
	Value string

	// At is the server's time of the item's last Add, to the millisecond.
	// An item written by the seed's script has the whole second it was
	// scored with. When more than 2048 items are added in one millisecond,
	// or the server's clock steps back, At runs ahead of the clock, by as
	// much, so that the order of arrival is kept.
	At time.Time
}

// A List is the last Max items of one owner, newest first, kept in one
// sorted set shared by every process that uses its Key.
//
// Add puts values at the front, moving a value already there, and drops
// the oldest beyond Max in the same script, so no reader ever sees more
// than Max items. The order is the order in which the server ran the
// Adds, and within one Add the order of its values, whatever the values'
// text and the callers' clocks. Items reads a page, newest first; Remove
// takes values out; Len counts. Every call is one script: all of it
// happens, or, when Redis replies with an error, none of it.
//
// A List is safe for concurrent use. A nil or zero List returns
// ErrInvalidConfig from every method.
type List struct {
	client redis.UniversalClient
	runner script.Runner
	cfg    Config
	keys   []string

	// Script arguments, boxed once: Max, MaxAge in ms and the expiry in ms.
	max, maxAge, expiry any
}

// New returns a List for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. New does not
// contact Redis.
func New(client redis.UniversalClient, cfg Config) (*List, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if script.IsNil(client) {
		return nil, invalidConfig("client is nil")
	}
	return &List{
		client: client,
		runner: script.Runner{Client: client},
		cfg:    cfg,
		keys:   []string{cfg.Key},
		max:    strconv.FormatInt(cfg.Max, 10),
		maxAge: ms(cfg.MaxAge),
		expiry: ms(cfg.expiry()),
	}, nil
}

// Config returns the List's configuration; the zero Config for a zero or
// nil List.
func (l *List) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

func (l *List) usable() error {
	if l == nil || l.client == nil {
		return errUnusable
	}
	return nil
}

// Add puts values at the front of the list, the last of them newest, with
// the server's time as their At, and drops, in the same step, the items
// beyond Max and those older than MaxAge. A value already in the list
// moves to the front; a value given twice counts as its last. It restarts
// the list's TTL.
//
// No values send nothing and return nil. It returns an error matching
// ErrInvalidArgument, with nothing sent, for more than MaxBatch values.
// When the error leaves the outcome unknown (see callerr.OutcomeUnknown: a
// timeout, a broken connection), the values may have been added; adding
// them again is safe, and only moves them to the front.
func (l *List) Add(ctx context.Context, values ...string) error {
	if err := l.usable(); err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	if len(values) > MaxBatch {
		return invalidArgument("%d values, above MaxBatch %d", len(values), MaxBatch)
	}
	args := make([]any, 0, 3+len(values))
	args = append(args, l.max, l.maxAge, l.expiry)
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

// Items returns up to count items, newest first, skipping the offset
// newest: Items(ctx, 0, 10) is the first page of ten, Items(ctx, 10, 10)
// the second. It reads only items within Max and not older than MaxAge,
// by the server's clock, and writes nothing. Pages read in separate calls
// may overlap or skip items added in between.
//
// An offset at or past the end returns no items and no error; so does a
// count of 0, and an offset at or past Max, with nothing sent. It returns
// an error matching ErrInvalidArgument, with nothing sent, for a negative
// offset or count.
func (l *List) Items(ctx context.Context, offset, count int64) ([]Item, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if offset < 0 || count < 0 {
		return nil, invalidArgument("offset %d and count %d must not be negative", offset, count)
	}
	count = min(count, max(l.cfg.Max-offset, 0))
	if count == 0 {
		return nil, nil
	}
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

// Remove takes values out of the list and returns how many of them were
// in it (items beyond Max or older than MaxAge, which Items no longer
// reads, are dropped first and do not count). A list emptied leaves no
// key. No values send nothing and return 0; more than MaxBatch return an
// error matching ErrInvalidArgument, with nothing sent. Removing a value
// again is safe.
func (l *List) Remove(ctx context.Context, values ...string) (int64, error) {
	if err := l.usable(); err != nil {
		return 0, err
	}
	if len(values) == 0 {
		return 0, nil
	}
	if len(values) > MaxBatch {
		return 0, invalidArgument("%d values, above MaxBatch %d", len(values), MaxBatch)
	}
	args := make([]any, 0, 2+len(values))
	args = append(args, l.max, l.maxAge)
	for _, v := range values {
		args = append(args, v)
	}
	reply, err := l.run(ctx, "remove", removeScript, args...)
	if err != nil {
		return 0, err
	}
	n, ok := reply.(int64)
	if !ok {
		return 0, l.fail(ctx, "remove", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// Len counts the items Items would read: those within Max and not older
// than MaxAge, by the server's clock. It writes nothing.
func (l *List) Len(ctx context.Context) (int64, error) {
	if err := l.usable(); err != nil {
		return 0, err
	}
	reply, err := l.run(ctx, "len", lenScript, l.max, l.maxAge)
	if err != nil {
		return 0, err
	}
	n, ok := reply.(int64)
	if !ok {
		return 0, l.fail(ctx, "len", callerr.UnexpectedReply(reply))
	}
	return n, nil
}

// run runs s on the list's key, and names the operation op in an error.
func (l *List) run(ctx context.Context, op string, s *script.Script, args ...any) (any, error) {
	reply, err := l.runner.Run(ctx, s, l.keys, args...).Result()
	if err != nil {
		return nil, l.fail(ctx, op, err)
	}
	return reply, nil
}

// fail returns the error of operation op, naming the list.
func (l *List) fail(ctx context.Context, op string, err error) error {
	return callerr.Call(ctx, "recent", op, l.cfg.Key, err)
}

// Scores are seconds with a binary fraction of 2^21 ticks, 2048 ticks a
// millisecond (see scripts/lib.lua).
const (
	ticksPerSecond = 1 << 21
	ticksPerMs     = 2048
)

// scoreTime is the time a score stands for, to the millisecond: a whole
// second, as the seed's script writes, is that second. A score that is no
// time since 1970 (negative, or beyond the year 2106) is the zero time.
func scoreTime(score float64) time.Time {
	if !(score >= 0 && score < 1<<32) {
		return time.Time{}
	}
	sec := math.Floor(score)
	msInSec := math.Floor((score - sec) * ticksPerSecond / ticksPerMs)
	return time.UnixMilli(int64(sec)*1000 + int64(msInSec))
}

// ms is d in whole milliseconds, as the scripts take it.
func ms(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
