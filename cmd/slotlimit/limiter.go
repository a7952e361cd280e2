package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit"
)

// The commands of package slotlimit's Limiter: count, holders, release,
// and watch (watch.go).

// A limitInfo is the limit a command works with, and where it came from.
type limitInfo struct {
	limit int64   // 0 when unknown
	given bool    // from -limit
	found []int64 // the limits found in Redis, lowest first, without -limit
}

// findLimit returns the limit of key: -limit when given, else the highest
// that the Limiters on key have left in Redis (slotlimit.Limits).
func (c *cli) findLimit(key string) (limitInfo, error) {
	switch {
	case c.limit < 0:
		return limitInfo{}, usageErrorf("-limit %d: a limit is at least 1", c.limit)
	case c.limit > 0:
		return limitInfo{limit: c.limit, given: true}, nil
	}
	ctx, cancel := c.call()
	defer cancel()
	found, err := slotlimit.Limits(ctx, c.client, key)
	if err != nil {
		return limitInfo{}, err
	}
	li := limitInfo{found: found}
	if len(found) > 0 {
		li.limit = found[len(found)-1]
	}
	return li, nil
}

// inUse describes n units in use against the limit, "4 of 5 units in
// use", and returns a note to end the line with: what is odd about the
// limit, if anything.
func (li limitInfo) inUse(n int64) (string, string) {
	switch {
	case li.limit == 0:
		return plural(int(n), "unit") + " in use", " (limit unknown: none recorded, the key is not full and nobody waits; give -limit)"
	case len(li.found) > 1:
		return fmt.Sprintf("%d of %d units in use", n, li.limit), fmt.Sprintf(" (limits in Redis: %s)", joinInts(li.found))
	}
	return fmt.Sprintf("%d of %d units in use", n, li.limit), ""
}

// json returns the limit for JSON: nil when unknown.
func (li limitInfo) json() *int64 {
	if li.limit == 0 {
		return nil
	}
	return &li.limit
}

// limiter returns a Limiter on key with limit. A limit of 0, unknown, makes
// it MaxLimit: Count, Holders and Inspect do not use the limit, and
// runRelease says why its release may.
func (c *cli) limiter(key string, limit int64) (*slotlimit.Limiter, error) {
	if limit == 0 {
		limit = slotlimit.MaxLimit
	}
	return slotlimit.New(c.client, slotlimit.Config{Key: key, Limit: limit})
}

// inspect reads key's snapshot.
func (c *cli) inspect(l *slotlimit.Limiter) (slotlimit.Snapshot, error) {
	ctx, cancel := c.call()
	defer cancel()
	return l.Inspect(ctx)
}

// runCount prints the units in use, against the limit when it is known,
// or with -json a summary.
func runCount(c *cli, args []string) error {
	key := args[0]
	li, snap, err := c.snapshot(key)
	if err != nil {
		return err
	}
	if !c.json {
		used, note := li.inUse(snap.InUse)
		fmt.Fprintf(c.stdout, "%s%s\n", used, note)
		return nil
	}
	return c.writeJSON(countJSON{
		Key:         key,
		InUse:       snap.InUse,
		Limit:       li.json(),
		HolderCount: len(snap.Holders),
		QueueLength: len(snap.Queue),
	})
}

type countJSON struct {
	Key         string `json:"key"`
	InUse       int64  `json:"in_use"`
	Limit       *int64 `json:"limit"` // null when unknown
	HolderCount int    `json:"holder_count"`
	QueueLength int    `json:"queue_length"`
}

// snapshot reads key's snapshot and finds its limit. A key with no live
// lease, no queue and no limit recorded holds no limiter: it says so (see
// cli.none), as it explains a key of another type (cli.wrongType).
func (c *cli) snapshot(key string) (limitInfo, slotlimit.Snapshot, error) {
	l, err := c.limiter(key, c.limit)
	if err != nil {
		return limitInfo{}, slotlimit.Snapshot{}, err
	}
	snap, err := c.inspect(l)
	if err != nil {
		return limitInfo{}, slotlimit.Snapshot{}, c.wrongType(err, "limiter", key)
	}
	if len(snap.Holders) == 0 && len(snap.Queue) == 0 {
		if ok, err := c.hasRecord(key); err != nil {
			return limitInfo{}, slotlimit.Snapshot{}, c.wrongType(err, "limiter", key)
		} else if !ok {
			return limitInfo{}, slotlimit.Snapshot{}, c.none("limiter", key)
		}
	}
	li, err := c.findLimit(key)
	if err == nil && li.limit == 0 {
		// Waiters that queued since Limits looked record theirs.
		for _, q := range snap.Queue {
			li.limit = max(li.limit, q.Limit)
		}
	}
	return li, snap, err
}

// hasRecord reports whether a Limiter recorded its settings beside key
// (slotlimit.Recorded; a Counter's record is not one).
func (c *cli) hasRecord(key string) (bool, error) {
	ctx, cancel := c.call()
	defer cancel()
	rec, ok, err := slotlimit.Recorded(ctx, c.client, key)
	return ok && rec.TTL > 0, err
}

// runHolders prints the live leases, with the time each has left, and the
// queue.
func runHolders(c *cli, args []string) error {
	key := args[0]
	li, snap, err := c.snapshot(key)
	if err != nil {
		return err
	}
	if c.json {
		return c.writeJSON(newHoldersJSON(key, li, snap))
	}
	w := c.stdout
	used, note := li.inUse(snap.InUse)
	fmt.Fprintf(w, "%s: %s by %s; %d waiting%s\n", key, used, plural(len(snap.Holders), "holder"), len(snap.Queue), note)
	fmt.Fprintf(w, "server clock %s\n", snap.ServerTime.UTC().Format(clockFormat))
	if len(snap.Holders) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "HOLDER", "UNITS", "TIME LEFT", "EXPIRES AT (SERVER CLOCK)")
		for _, h := range snap.Holders {
			t.row(display(h.ID), h.Weight, left(h.ExpiresAt.Sub(snap.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat))
		}
		t.flush()
	}
	if len(snap.Queue) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "QUEUE", "WAITER", "UNITS", "LIMIT", "LEASE", "ENTRY LAPSES IN")
		for i, q := range snap.Queue {
			t.row(i+1, display(q.ID), q.Units, orDash(q.Limit), q.TTL, left(q.EntryExpiresAt.Sub(snap.ServerTime)))
		}
		t.flush()
	}
	return nil
}

type holdersJSON struct {
	Key         string       `json:"key"`
	ServerTime  time.Time    `json:"server_time"`
	Limit       *int64       `json:"limit"` // null when unknown
	Limits      []int64      `json:"limits_in_redis,omitempty"`
	InUse       int64        `json:"in_use"`
	HolderCount int          `json:"holder_count"`
	QueueLength int          `json:"queue_length"`
	Holders     []holderJSON `json:"holders"`
	Queue       []waiterJSON `json:"queue"`
}

type holderJSON struct {
	ID        string    `json:"id"`
	Units     int64     `json:"units"`
	TTLMillis int64     `json:"ttl_ms"` // time left, on the server's clock
	ExpiresAt time.Time `json:"expires_at"`
}

type waiterJSON struct {
	ID             string    `json:"id"`
	Arrival        int64     `json:"arrival"`
	Units          int64     `json:"units"`
	Limit          int64     `json:"limit"` // 0 when its entry records none
	LeaseMillis    int64     `json:"lease_ms"`
	EntryTTLMillis int64     `json:"entry_ttl_ms"`
	EntryExpiresAt time.Time `json:"entry_expires_at"`
}

func newHoldersJSON(key string, li limitInfo, snap slotlimit.Snapshot) holdersJSON {
	out := holdersJSON{
		Key:         key,
		ServerTime:  snap.ServerTime.UTC(),
		Limit:       li.json(),
		Limits:      li.found,
		InUse:       snap.InUse,
		HolderCount: len(snap.Holders),
		QueueLength: len(snap.Queue),
		Holders:     []holderJSON{},
		Queue:       []waiterJSON{},
	}
	for _, h := range snap.Holders {
		out.Holders = append(out.Holders, holderJSON{
			ID:        h.ID,
			Units:     h.Weight,
			TTLMillis: h.ExpiresAt.Sub(snap.ServerTime).Milliseconds(),
			ExpiresAt: h.ExpiresAt.UTC(),
		})
	}
	for _, q := range snap.Queue {
		out.Queue = append(out.Queue, waiterJSON{
			ID:             q.ID,
			Arrival:        q.Arrival,
			Units:          q.Units,
			Limit:          q.Limit,
			LeaseMillis:    q.TTL.Milliseconds(),
			EntryTTLMillis: q.EntryExpiresAt.Sub(snap.ServerTime).Milliseconds(),
			EntryExpiresAt: q.EntryExpiresAt.UTC(),
		})
	}
	return out
}

// runRelease force-releases a holder with Limiter.Release, the release
// script itself, so that its units go to the first waiters that fit, as
// any release's do.
//
// The limit matters to a release in one way: it deletes the full marker of
// that limit. Waiters are handed units only within the limit in their own
// entry. So with the limit unknown (no marker lives, and no waiter records
// one), MaxLimit serves as well as any; but a waiter whose entry records
// no limit would be handed units up to that, so then -limit is required.
func runRelease(c *cli, args []string) error {
	key, holder := args[0], args[1]
	l, err := c.limiter(key, c.limit)
	if err != nil {
		return err
	}
	before, err := c.inspect(l)
	if err != nil {
		return c.wrongType(err, "limiter", key)
	}
	li, err := c.findLimit(key)
	if err != nil {
		return err
	}
	if l, err = c.limiter(key, li.limit); err != nil {
		return err
	}
	if li.limit == 0 && len(before.Queue) > 0 {
		// Waiters that queued since Limits looked.
		for _, q := range before.Queue {
			li.limit = max(li.limit, q.Limit)
		}
		if li.limit == 0 {
			return usageErrorf("%s has waiters whose entries record no limit: give -limit", key)
		}
		if l, err = c.limiter(key, li.limit); err != nil {
			return err
		}
	}
	ctx, cancel := c.call()
	defer cancel()
	released := true
	if err := l.Release(ctx, holder); errors.Is(err, slotlimit.ErrNotHeld) {
		released = false
	} else if err != nil {
		return err
	}
	if !released {
		var err error
		if released, err = c.releasedBefore(l, holder, before); err != nil {
			return err
		}
	}
	if !released {
		if c.json {
			out := releaseJSON{Key: key, Holder: holder, HandedTo: []handedJSON{}, InUse: before.InUse, QueueLength: len(before.Queue)}
			if err := c.writeJSON(out); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(c.stdout, "%s held nothing on %s: nothing released\n", display(holder), key)
		}
		return errNo
	}
	after, err := c.inspect(l)
	if err != nil {
		return err
	}
	out := releaseJSON{Key: key, Holder: holder, Released: true, HandedTo: []handedJSON{}, InUse: after.InUse, QueueLength: len(after.Queue)}
	if i := slices.IndexFunc(before.Holders, func(h slotlimit.Holder) bool { return h.ID == holder }); i >= 0 {
		out.Units = before.Holders[i].Weight
	}
	for _, q := range before.Queue {
		if slices.ContainsFunc(after.Holders, func(h slotlimit.Holder) bool { return h.ID == q.ID }) {
			out.HandedTo = append(out.HandedTo, handedJSON{ID: q.ID, Units: q.Units})
		}
	}
	if c.json {
		return c.writeJSON(out)
	}
	fmt.Fprintf(c.stdout, "released %s on %s (%s)\n", display(holder), key, plural(int(out.Units), "unit"))
	var handed []string
	for _, h := range out.HandedTo {
		handed = append(handed, fmt.Sprintf("%s (%s)", display(h.ID), plural(int(h.Units), "unit")))
	}
	if len(handed) > 0 {
		fmt.Fprintf(c.stdout, "handed to waiters: %s\n", strings.Join(handed, ", "))
	}
	used, note := li.inUse(after.InUse)
	fmt.Fprintf(c.stdout, "now %s; %d waiting%s\n", used, len(after.Queue), note)
	return nil
}

// releasedBefore reports whether a release that answered "held nothing"
// freed holder all the same: a release that the client sent again after
// its reply was lost finds nothing the second time. holder held a live
// lease when before was read; if, by the server's clock now, its deadline
// has not come and holder holds none, only a release can have freed it:
// this one's first run, or, in the moment between, the holder's own.
func (c *cli) releasedBefore(l *slotlimit.Limiter, holder string, before slotlimit.Snapshot) (bool, error) {
	i := slices.IndexFunc(before.Holders, func(h slotlimit.Holder) bool { return h.ID == holder })
	if i < 0 {
		return false, nil
	}
	now, err := c.inspect(l)
	if err != nil {
		return false, err
	}
	gone := !slices.ContainsFunc(now.Holders, func(h slotlimit.Holder) bool { return h.ID == holder })
	return gone && now.ServerTime.Before(before.Holders[i].ExpiresAt), nil
}

type releaseJSON struct {
	Key         string       `json:"key"`
	Holder      string       `json:"holder"`
	Released    bool         `json:"released"`
	Units       int64        `json:"units"`     // the units it held
	HandedTo    []handedJSON `json:"handed_to"` // waiters queued before that hold units after
	InUse       int64        `json:"in_use"`    // after the release; before a release that found nothing
	QueueLength int          `json:"queue_length"`
}

type handedJSON struct {
	ID    string `json:"id"`
	Units int64  `json:"units"`
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ", ")
}

// orDash formats n, or "-" for 0.
func orDash(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}
