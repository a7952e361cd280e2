package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

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
func (c *cli) findLimit(ctx context.Context, key string) (limitInfo, error) {
	switch {
	case c.limit < 0:
		return limitInfo{}, usageErrorf("-limit %d: a limit is at least 1", c.limit)
	case c.limit > 0:
		return limitInfo{limit: c.limit, given: true}, nil
	}
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

// orWaiters makes an unknown limit the highest that the entries of queue
// record: waiters that queued since the limit was looked for record
// theirs. It leaves a known limit as it is.
func (li *limitInfo) orWaiters(queue []slotlimit.Waiter) {
	if li.limit != 0 {
		return
	}
	for _, q := range queue {
		li.limit = max(li.limit, q.Limit)
	}
}

// ofLimit describes n units in use against limit, 0 when unknown, as the
// page and ls show it.
func ofLimit(n, limit int64) string {
	if limit == 0 {
		return plural(int(n), "unit") + " in use, limit unknown"
	}
	return fmt.Sprintf("%d of %d units in use", n, limit)
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

// newLimiter returns a Limiter on key with limit. A limit of 0, unknown,
// makes it MaxLimit: Count, Holders and Inspect do not use the limit, and
// runRelease says why its release may.
func newLimiter(client redis.UniversalClient, key string, limit int64) (*slotlimit.Limiter, error) {
	if limit == 0 {
		limit = slotlimit.MaxLimit
	}
	return slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit})
}

// inspect reads key's snapshot.
func (c *cli) inspect(l *slotlimit.Limiter) (slotlimit.Snapshot, error) {
	ctx, cancel := c.call()
	defer cancel()
	return l.Inspect(ctx)
}

// A limiterView is a limiter as its commands and its page show it: its
// snapshot, read at one moment by Limiter.Inspect, and its limit.
type limiterView struct {
	snap slotlimit.Snapshot
	li   limitInfo
}

// A limitFinder finds the limit of the limiter whose snapshot is snap:
// the commands take it from slotlimit.Limits (cli.findLimit), the page,
// which reads once a second, from the record beside the key alone
// (recordedLimit), so that it never walks a node with SCAN.
type limitFinder func(ctx context.Context, snap slotlimit.Snapshot) (limitInfo, error)

// readLimiter reads key's snapshot with Limiter.Inspect, which writes
// nothing, on a Limiter of limit (see newLimiter), and then its limit
// with find; when that finds none, the highest that its waiters' entries
// record (limitInfo.orWaiters).
func readLimiter(ctx context.Context, client redis.UniversalClient, key string, limit int64, find limitFinder) (limiterView, error) {
	l, err := newLimiter(client, key, limit)
	if err != nil {
		return limiterView{}, err
	}
	snap, err := l.Inspect(ctx)
	if err != nil {
		return limiterView{}, err
	}
	li, err := find(ctx, snap)
	if err != nil {
		return limiterView{}, err
	}
	li.orWaiters(snap.Queue)
	return limiterView{snap: snap, li: li}, nil
}

// releaseHolder force-releases holder with l.Release, the release script
// itself, so that its units go to the first waiters that fit, as any
// release's do; before is the snapshot read first. l's limit is the
// limit of the key, the one whose full marker the release deletes (see
// runRelease). It reports false when holder held nothing.
//
// A release that answered "held nothing" counts all the same when it
// freed holder: one that the client sent again after its reply was lost
// finds nothing the second time (releasedBefore).
func releaseHolder(ctx context.Context, l *slotlimit.Limiter, holder string, before slotlimit.Snapshot) (bool, error) {
	err := l.Release(ctx, holder)
	if errors.Is(err, slotlimit.ErrNotHeld) {
		return releasedBefore(ctx, l, holder, before)
	}
	return err == nil, err
}

// heldNothing is the answer of a release that found nothing to release.
func heldNothing(key, holder string) string {
	return fmt.Sprintf("%s held nothing on %s: nothing released", display(holder), key)
}

// runCount prints the units in use, against the limit when it is known,
// or with -json a summary.
func runCount(c *cli, args []string) error {
	key := args[0]
	v, err := c.snapshot(key)
	if ctr, ok := asCounter(err); ok {
		return c.countCounter(key, ctr.claim)
	}
	if err != nil {
		return err
	}
	if !c.json {
		used, note := v.li.inUse(v.snap.InUse)
		fmt.Fprintf(c.stdout, "%s%s\n", used, note)
		return nil
	}
	return c.writeJSON(countJSON{
		Key:         key,
		InUse:       v.snap.InUse,
		Limit:       v.li.json(),
		HolderCount: len(v.snap.Holders),
		QueueLength: len(v.snap.Queue),
	})
}

type countJSON struct {
	Key         string `json:"key"`
	Kind        string `json:"kind,omitempty"` // "counter" for a Counter's key; left out for a limiter's
	InUse       int64  `json:"in_use"`
	Limit       *int64 `json:"limit"` // null when unknown
	HolderCount int    `json:"holder_count"`
	QueueLength int    `json:"queue_length"`
}

// snapshot reads key with readAt; a key that holds no limiter is
// answered (see cli.noLimiter).
func (c *cli) snapshot(key string) (limiterView, error) {
	ctx, cancel := c.call()
	defer cancel()
	return c.readAt(ctx, key, true)
}

// readAt reads key with readLimiter, the limit from cli.findLimit, and
// explains a key of another type (cli.wrongType): a key that the records
// beside it give to a Counter is the error counterKey, which the command
// answers, and one that they give to a lock or a fixed window is said to
// be theirs (see claimed). With orNone, a key with no live lease, no queue
// and no limit recorded is answered as cli.noLimiter answers it.
func (c *cli) readAt(ctx context.Context, key string, orNone bool) (limiterView, error) {
	v, err := readLimiter(ctx, c.client, key, c.limit, func(ctx context.Context, snap slotlimit.Snapshot) (limitInfo, error) {
		if orNone && len(snap.Holders) == 0 && len(snap.Queue) == 0 {
			if ok, err := hasRecord(ctx, c.client, key); err != nil {
				return limitInfo{}, err
			} else if !ok {
				return limitInfo{}, c.noLimiter(ctx, key)
			}
		}
		return c.findLimit(ctx, key)
	})
	if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
		if cerr := c.otherClaim(ctx, key); cerr != nil {
			return v, cerr
		}
	}
	return v, c.wrongType(err, "limiter", key)
}

// noLimiter answers a key with no live lease, no queue and no limit
// recorded: one that the records beside it give to another primitive as
// cli.otherClaim does, any other with "no limiter at KEY" (cli.none).
func (c *cli) noLimiter(ctx context.Context, key string) error {
	if err := c.otherClaim(ctx, key); err != nil {
		return err
	}
	return c.none("limiter", key)
}

// A counterKey is the error of a read, as a limiter's, of a key that the
// records beside it give to a Counter.
type counterKey struct{ claim }

func (counterKey) Error() string { return "a counter's key" }

// asCounter returns err as a counterKey, and whether it is one.
func asCounter(err error) (counterKey, bool) {
	var ctr counterKey
	ok := errors.As(err, &ctr)
	return ctr, ok
}

// otherClaim returns counterKey for a key that the records beside it
// give to a Counter, and errNo, having said so, for one that they give to
// a lock or a fixed window; nil for any other.
func (c *cli) otherClaim(ctx context.Context, key string) error {
	cl, err := readClaim(ctx, c.client, key)
	switch {
	case err != nil:
		return err
	case cl.kind == kindCounter:
		return counterKey{cl}
	case cl.kind != "":
		fmt.Fprintln(c.stderr, claimed(cl, kindLimiter, key))
		return errNo
	}
	return nil
}

// countCounter prints the count of the Counter at key against its
// recorded limit, or -limit, as count prints a limiter's units in use.
func (c *cli) countCounter(key string, cl claim) error {
	ctx, cancel := c.call()
	defer cancel()
	li := limitInfo{limit: cl.limit, found: []int64{cl.limit}}
	if c.limit != 0 {
		var err error
		if li, err = c.findLimit(ctx, key); err != nil {
			return err
		}
	}
	f := found{Kind: kindCounter, Key: key, Figures: map[string]int64{}}
	if err := describeCounter(ctx, c.client, &f); err != nil {
		return c.wrongType(err, kindCounter, key)
	}
	n := f.Figures["in_use"]
	if c.json {
		return c.writeJSON(countJSON{Key: key, Kind: kindCounter, InUse: n, Limit: li.json()})
	}
	used, note := li.inUse(n)
	fmt.Fprintf(c.stdout, "%s%s\n", used, note)
	return nil
}

// noHolders answers holders and release given a Counter's key: a counter
// keeps a count, not holders. It returns errNo.
func (c *cli) noHolders(key string) error {
	fmt.Fprintf(c.stderr, "%s holds a counter: it keeps a count, not holders (count %s shows it)\n", display(key), display(key))
	return errNo
}

// hasRecord reports whether a Limiter recorded its settings beside key
// (slotlimit.Recorded; a Counter's record is not one).
func hasRecord(ctx context.Context, client redis.UniversalClient, key string) (bool, error) {
	rec, ok, err := slotlimit.Recorded(ctx, client, key)
	return ok && rec.TTL > 0, err
}

// runHolders prints the live leases, with the time each has left, and the
// queue.
func runHolders(c *cli, args []string) error {
	key := args[0]
	v, err := c.snapshot(key)
	if _, ok := asCounter(err); ok {
		return c.noHolders(key)
	}
	if err != nil {
		return err
	}
	li, snap := v.li, v.snap
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
	ctx, cancel := c.call()
	defer cancel()
	v, err := c.readAt(ctx, key, false)
	if _, ok := asCounter(err); ok {
		return c.noHolders(key)
	}
	if err != nil {
		return err
	}
	before, li := v.snap, v.li
	// A key with no live lease, no queue and no limit recorded holds no
	// limiter: after the release, which refuses a bad HOLDER first, the
	// answer is noLimiter's. A Counter's key is refused before it.
	none := false
	if len(before.Holders) == 0 && len(before.Queue) == 0 {
		ok, err := hasRecord(ctx, c.client, key)
		if err != nil {
			return err
		}
		if !ok {
			if err := c.otherClaim(ctx, key); err != nil {
				if _, ok := asCounter(err); ok {
					return c.noHolders(key)
				}
				return err
			}
			none = true
		}
	}
	if li.limit == 0 && len(before.Queue) > 0 {
		return usageErrorf("%s has waiters whose entries record no limit: give -limit", key)
	}
	l, err := newLimiter(c.client, key, li.limit)
	if err != nil {
		return err
	}
	released, err := releaseHolder(ctx, l, holder, before)
	if err != nil {
		return err
	}
	if !released && none {
		return c.none("limiter", key)
	}
	if !released {
		if c.json {
			out := releaseJSON{Key: key, Holder: holder, HandedTo: []handedJSON{}, InUse: before.InUse, QueueLength: len(before.Queue)}
			if err := c.writeJSON(out); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(c.stdout, heldNothing(key, holder))
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
func releasedBefore(ctx context.Context, l *slotlimit.Limiter, holder string, before slotlimit.Snapshot) (bool, error) {
	i := slices.IndexFunc(before.Holders, func(h slotlimit.Holder) bool { return h.ID == holder })
	if i < 0 {
		return false, nil
	}
	now, err := l.Inspect(ctx)
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
