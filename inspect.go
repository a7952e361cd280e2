package slotlimit

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// This file reads a Limiter's key for operators and tools, such as the
// slotlimit command: what is held and who waits (Inspect), and which
// limits the Limiters on a key use (Limits, Recorded). Nothing here writes.

// A Snapshot is the state of a Limiter's key at one moment, read by one
// script: the live leases, and the callers queued for units.
type Snapshot struct {
	// ServerTime is the Redis server's clock when the Snapshot was read.
	// Every time below is on that clock, so ExpiresAt.Sub(ServerTime) is
	// the time a lease has left, whatever the local clock says.
	ServerTime time.Time

	// InUse is the units held by live leases, as Count returns it.
	InUse int64

	// Holders are the live leases, earliest deadline first, as Holders
	// returns them.
	Holders []Holder

	// Queue holds the callers waiting for units, in arrival order: the
	// order in which fair mode serves them, and in which a release offers
	// them what it frees. Entries that lapsed (their waiter stopped
	// trying) are left out.
	Queue []Waiter
}

// A Waiter is one caller queued for units on a Limiter's key: an AcquireN
// (Acquire, AcquireLease, Do) that was refused and waits, and that a
// release hands units to.
type Waiter struct {
	ID      string        // the holder ID it waits as
	Arrival int64         // its arrival number: lower came first; a release's notice names it
	Units   int64         // the units it waits for
	TTL     time.Duration // the lease time it asked for
	Limit   int64         // the limit it waits under, which a release honours; 0 if its entry records none

	// EntryExpiresAt is when its place in the queue lapses unless it
	// tries again, which a live waiter does every second.
	EntryExpiresAt time.Time
}

// Inspect reads the live leases and the queue of the Limiter's key at one
// moment, in one script that writes nothing. It is for operators and
// tools; a caller that takes slots has no need of it. It does not depend
// on the Limiter's Limit (see Limits and Recorded for that).
func (l *Limiter) Inspect(ctx context.Context) (Snapshot, error) {
	if err := l.usable(ctx, "Inspect"); err != nil {
		return Snapshot{}, err
	}
	return l.runInspect(ctx)
}

// decodeSnapshot reads the reply of inspect.lua (see its header).
func decodeSnapshot(reply []string) (Snapshot, bool) {
	if len(reply) < 3 {
		return Snapshot{}, false
	}
	var head [3]int64
	if !parseInts(head[:], reply[:3]) {
		return Snapshot{}, false
	}
	now, inUse, n := head[0], head[1], head[2]
	rest := reply[3:]
	if n < 0 || n > int64(len(rest)/3) || (len(rest)-3*int(n))%6 != 0 {
		return Snapshot{}, false
	}
	snap := Snapshot{ServerTime: time.UnixMilli(now), InUse: inUse, Holders: make([]Holder, 0, n)}
	for i := 0; i < int(3*n); i += 3 {
		var v [2]int64
		if !parseInts(v[:], rest[i+1:i+3]) {
			return Snapshot{}, false
		}
		snap.Holders = append(snap.Holders, Holder{ID: rest[i], ExpiresAt: time.UnixMilli(v[0]), Weight: v[1]})
	}
	rest = rest[3*n:]
	snap.Queue = make([]Waiter, 0, len(rest)/6)
	for i := 0; i < len(rest); i += 6 {
		var v [5]int64
		if !parseInts(v[:], rest[i+1:i+6]) {
			return Snapshot{}, false
		}
		snap.Queue = append(snap.Queue, Waiter{
			ID:             rest[i],
			Arrival:        v[0],
			EntryExpiresAt: time.UnixMilli(v[1]),
			Units:          v[2],
			TTL:            time.Duration(v[3]) * time.Millisecond,
			Limit:          v[4],
		})
	}
	return snap, true
}

// parseInts parses each of s into v, which must be as long, and reports
// false if one is not an integer.
func parseInts(v []int64, s []string) bool {
	for i, x := range s {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return false
		}
		v[i] = n
	}
	return true
}

// Recorded returns the settings that the last Limiter or Counter to run
// on key recorded beside it: Key, Limit and TTL, the lease time, which is
// 0 in a Counter's record, the only field by which the two differ. It
// returns false when key has no record: no Limiter or Counter has run on
// it for a while (see Config), or only those of releases before records
// were kept. It reads one key and writes nothing. It refuses a client and
// a key as New does, and a nil ctx with ErrInvalidArgument.
func Recorded(ctx context.Context, client redis.UniversalClient, key string) (Config, bool, error) {
	if err := checkRead(ctx, "Recorded", client, key); err != nil {
		return Config{}, false, err
	}
	return readRecord(ctx, "Recorded", client, key)
}

// checkRead returns the error of a read of key by the function method,
// which refuses a client and a key as New does, and a nil ctx.
func checkRead(ctx context.Context, method string, client redis.UniversalClient, key string) error {
	switch fault := kernel.KeyFault(key); {
	case script.IsNil(client):
		return errs.Op(method, key, errs.Config("client is nil"))
	case fault != "":
		return errs.Op(method, key, errs.Config("Key %q %s", key, fault))
	case ctx == nil:
		return errs.Check(ctx, true, method, key)
	}
	return nil
}

// readRecord reads key's settings record for the function method (see
// Recorded). A record it cannot read is taken as none.
func readRecord(ctx context.Context, method string, client redis.UniversalClient, key string) (Config, bool, error) {
	names, _ := hashtag.Names(key, recordSuffix)
	fields, err := record.Read(ctx, client, names[1])
	if err != nil && !unparsable(err) {
		return Config{}, false, errs.Call(ctx, method, key, err)
	}
	limit, err := strconv.ParseInt(fields.Get("limit"), 10, 64)
	if fields == nil || err != nil || limit < 1 || limit > MaxLimit {
		return Config{}, false, nil
	}
	cfg := Config{Key: key, Limit: limit}
	if lease := fields.Get("lease"); lease != "" {
		ms, err := strconv.ParseInt(lease, 10, 64)
		if err != nil || ms < 1 || ms > MaxTTL.Milliseconds() {
			return Config{}, false, nil
		}
		cfg.TTL = time.Duration(ms) * time.Millisecond
	}
	return cfg, true, nil
}

// unparsable reports whether err is that of url.ParseQuery, which reads a
// record: a bad escape, or a semicolon.
func unparsable(err error) bool {
	var bad url.EscapeError
	return errors.As(err, &bad) || strings.Contains(err.Error(), "invalid semicolon separator")
}

// Limits returns the limits that the Limiters on key use, lowest first,
// each once: that of the settings record beside key (see Recorded), and
// those of queued waiters. When key has no Limiter's record, as for a key
// last used by a release that kept none, it looks for the limits of a full
// key's markers instead, which walks every key on the node of key with
// SCAN: that is for operators, not a busy path. It returns none when no
// Limiter has run on key for a while (see Config), and more than one when
// Limiters with different limits share it, as during a rolling change
// (the record is the last writer's). It writes nothing. It refuses a
// client and a key as New does, and a nil ctx with ErrInvalidArgument.
func Limits(ctx context.Context, client redis.UniversalClient, key string) ([]int64, error) {
	if err := checkRead(ctx, "Limits", client, key); err != nil {
		return nil, err
	}
	rec, ok, err := readRecord(ctx, "Limits", client, key)
	if err != nil {
		return nil, err
	}
	var limits []int64
	if ok && rec.TTL > 0 {
		limits = append(limits, rec.Limit)
	} else if limits, err = scanLimits(ctx, client, key); err != nil {
		return nil, errs.Call(ctx, "Limits", key, err)
	}
	names, _ := hashtag.Names(key, queueWantsSuffix)
	wants, err := client.HVals(ctx, names[1]).Result()
	if err != nil {
		return nil, errs.Call(ctx, "Limits", key, err)
	}
	for _, want := range wants {
		if n, ok := waitqueue.WantLimit(want); ok {
			limits = append(limits, n)
		}
	}
	slices.Sort(limits)
	return slices.Compact(limits), nil
}

// scanLimits returns the limits in the names of key's full markers, which
// it finds by SCAN on the node of key (every shard of a Ring).
func scanLimits(ctx context.Context, client redis.UniversalClient, key string) ([]int64, error) {
	names, _ := hashtag.Names(key, fullSuffix)
	marker := names[1]
	var limits []int64
	scan := func(ctx context.Context, node redis.Cmdable) error {
		iter := node.Scan(ctx, 0, globEscape(marker)+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if n, err := strconv.ParseInt(strings.TrimPrefix(iter.Val(), marker), 10, 64); err == nil && n > 0 {
				limits = append(limits, n)
			}
		}
		return iter.Err()
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		var node *redis.Client
		if node, err = c.MasterForKey(ctx, key); err == nil {
			err = scan(ctx, node)
		}
	case *redis.Ring:
		err = c.ForEachShard(ctx, func(ctx context.Context, shard *redis.Client) error { return scan(ctx, shard) })
	default:
		err = scan(ctx, client)
	}
	if err != nil {
		return nil, err
	}
	return limits, nil
}

// globEscape escapes the characters that a SCAN MATCH pattern reads as
// wildcards, so that s matches itself alone.
func globEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
