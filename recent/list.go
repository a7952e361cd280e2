package recent

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
)

// MaxBatch bounds the values of one Add or Remove, so that one script
// call stays short.
const MaxBatch = 1000

// An Item is one entry of a list, as Items returns it.
type Item struct {
	// Value is the value added, byte for byte.
	Value string

	// At is the server's time of the item's last Add, to the microsecond.
	// An item scored in seconds (see the package doc: written by a script
	// that scores whole seconds, or by this package before it scored
	// microseconds) has the second, or millisecond, it was scored with.
	// When Adds to one list come faster than one value a microsecond, or
	// the server's clock steps back, At runs ahead of the clock, by as
	// much, so that the order of arrival is kept.
	At time.Time
}

// A List is the last Max items of one owner, newest first, kept in one
// sorted set shared by every process that uses its Key. The order is the
// order in which the server ran the Adds, and within one Add the order of
// its values, whatever the values' text and the callers' clocks. Every
// call runs in one script: all of it happens, or, when Redis replies with
// an error, none of it. Add and Remove may be sent again with the same
// values (see each for what that changes), so a call whose outcome is
// unknown is safe to repeat.
//
// A List is safe for concurrent use. Concurrent Adds of a few values
// each, made through one List, share one script call, which runs them in
// turn, in the order they were made, and so do such Removes; each caller
// gets what its call alone would (see Config.DisableCoalescing). A nil or
// zero List returns ErrInvalidConfig from every method.
type List struct {
	base kernel.Base
	cfg  Config
	keys []string // the scripts' keys (see keyList)

	// Script arguments, boxed once, as decimal text: -Max-1 (the trim's
	// last rank), MaxAge in ms and the expiry in ms.
	trim, maxAge, expiry any

	// The Adds and the Removes of at most coalescedValues values each,
	// sent in batches, or each alone with Config.DisableCoalescing (see
	// sendAdds and sendRemoves). The list is one key of one Config, so every call of a
	// kind shares one lane.
	adds    coalesce.Group[struct{}, []string, struct{}]
	removes coalesce.Group[struct{}, []string, int64]

	// memo keeps the record of the list's bounds written at most once a
	// minute (see recordBounds).
	memo record.Memo
}

// coalescedValues is the most values an Add or a Remove may carry and be
// sent in a batch with others; one with more is sent alone. A batch
// carries at most coalescedCalls calls, so at most 256 values, a quarter
// of MaxBatch, which Redis runs in well under a millisecond.
const (
	coalescedValues = 4
	coalescedCalls  = 64
)

// listpackEntries is the most items a sorted set is kept in as a
// listpack, Redis's compact form, by default (zset-max-listpack-entries);
// one that ever holds more is a skiplist, several times the size, from
// then on, even once trimmed.
const listpackEntries = 128

// addCalls is the most Adds a batch carries on a list of at most most
// items (Config.Max): coalescedCalls, but, when that many items fit in a
// listpack, only as many as fit beside them, so that a batch never makes
// a skiplist of a list that Adds of a few values each, sent alone, keep
// compact. Below 2, Adds are sent alone.
func addCalls(most int64) int {
	if most >= listpackEntries {
		return coalescedCalls
	}
	return int(min(coalescedCalls, (listpackEntries-most)/coalescedValues))
}

// New returns a List for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. New does not
// contact Redis.
func New(client redis.UniversalClient, cfg Config) (*List, error) {
	b, err := errs.New(client, kernel.Settings{Keyed: true, Key: cfg.Key, Sides: []string{suffix}, Observer: cfg.Observer})
	if err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	l := &List{
		base:   b,
		cfg:    cfg,
		keys:   b.Keys[1:],
		trim:   strconv.FormatInt(-cfg.Max-1, 10),
		maxAge: ms(cfg.MaxAge),
		expiry: ms(cfg.expiry()),
	}
	l.adds.Send, l.adds.Max, l.adds.Alone = l.sendAdds, addCalls(cfg.Max), cfg.DisableCoalescing
	l.removes.Send, l.removes.Max, l.removes.Alone = l.sendRemoves, coalescedCalls, cfg.DisableCoalescing
	return l, nil
}

// coalesces reports whether a call with values goes through its kind's
// Group, whose batches carry at most calls calls, to be sent alone or in
// a batch (always alone with Config.DisableCoalescing).
func (l *List) coalesces(values []string, calls int) bool {
	return len(values) <= coalescedValues && calls > 1
}

// Config returns the List's configuration; the zero Config for a zero or
// nil List.
func (l *List) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// Add puts values at the front of the list, the last of them newest, at
// the server's time, moving a value already there, and drops, in the same
// step, the items beyond Max and those older than MaxAge; it restarts the
// list's TTL. No values send nothing and return nil. It returns
// ErrInvalidArgument, with nothing sent, for more than MaxBatch values or
// a nil ctx, and an error matching ctx.Err(), with nothing sent, for a
// ctx that has ended; on any other error all of it happened or none of
// it. A call sent again moves the values to the front again, with the
// time of its last run. The first Add of a List, and one a minute after
// that, also records the List's bounds beside the list (see Recorded).
func (l *List) Add(ctx context.Context, values ...string) error {
	if err := l.check(ctx, "Add", values); err != nil || len(values) == 0 {
		return err
	}
	c := l.base.Begin("Add", l.cfg.Key, "", int64(len(values)), 0)
	l.recordBounds(ctx)
	if err := l.add(ctx, values); err != nil {
		c.Failed(ctx, err)
		return err
	}
	c.Done(ctx)
	return nil
}

// Items returns up to count items, newest first, skipping the offset
// newest: Items(ctx, 0, 10) is the first page of ten, Items(ctx, 10, 10)
// the second. It reads only items within Max and not older than MaxAge,
// and writes nothing; pages read in separate calls may overlap or skip
// items added in between. An offset at or past the end, or a count of 0,
// returns no items and no error. It returns ErrInvalidArgument, with
// nothing sent, for a negative offset or count, or a nil ctx.
func (l *List) Items(ctx context.Context, offset, count int64) ([]Item, error) {
	if err := l.check(ctx, "Items", nil); err != nil {
		return nil, err
	}
	if offset < 0 || count < 0 {
		return nil, errs.Op("Items", l.cfg.Key, errs.Argument("offset %d and count %d must not be negative", offset, count))
	}
	count = min(count, max(l.cfg.Max-offset, 0))
	if count == 0 {
		return nil, nil
	}
	return l.items(ctx, offset, count)
}

// Remove takes values out of the list and returns how many of them were
// in it; items that Items no longer reads do not count. No values send
// nothing and return 0. It returns Add's errors for bad input, with
// nothing sent; on any other error all of it happened or none of it. A
// call sent again leaves the list as one call does, and counts what its
// last run found: never more than were removed.
func (l *List) Remove(ctx context.Context, values ...string) (int64, error) {
	if err := l.check(ctx, "Remove", values); err != nil || len(values) == 0 {
		return 0, err
	}
	c := l.base.Begin("Remove", l.cfg.Key, "", int64(len(values)), 0)
	n, err := l.remove(ctx, values)
	if err != nil {
		c.Failed(ctx, err)
		return 0, err
	}
	found := c.For("", n) // the values counted, not those given
	found.Done(ctx)
	return n, nil
}

// Len counts the items Items would read: those within Max and not older
// than MaxAge, by the server's clock. It writes nothing. It returns an
// error matching ErrInvalidArgument, with nothing sent, for a nil ctx.
func (l *List) Len(ctx context.Context) (int64, error) {
	if err := l.check(ctx, "Len", nil); err != nil {
		return 0, err
	}
	n, err := l.len(ctx)
	return min(n, l.cfg.Max), err
}

// check returns the error of a call of method with values, before
// anything is sent: that of a zero or nil List, a nil ctx, a ctx that has
// ended (which matches ctx's error, and not ErrOutcomeUnknown, since
// nothing was sent), or more than MaxBatch values.
func (l *List) check(ctx context.Context, method string, values []string) error {
	if l == nil || !l.base.Usable() {
		return errs.Check(ctx, false, method, "")
	}
	if err := errs.Check(ctx, true, method, l.cfg.Key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errs.Op(method, l.cfg.Key, err)
	}
	if len(values) > MaxBatch {
		return errs.Op(method, l.cfg.Key, errs.Argument("%d values, above MaxBatch %d", len(values), MaxBatch))
	}
	return nil
}

// ms is d in whole milliseconds, as the scripts take it.
func ms(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
