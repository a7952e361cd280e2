package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/recent"
)

// The commands of package recent: recent list and recent remove.

func recentFlags(fs *flag.FlagSet, c *cli) {
	fs.IntVar(&c.n, "n", 0, "list at most `COUNT` items; 0 lists all")
	fs.Int64Var(&c.offset, "offset", 0, "skip the `N` newest items")
	fs.Func("max-age", "leave out items older than `D`, as the list's Config.MaxAge does; 0 lists them all; by default, the MaxAge its Lists recorded", func(v string) error {
		d, err := time.ParseDuration(v)
		c.maxAge, c.maxAgeSet = d, true
		return err
	})
}

// recentKind names a recent list in the answers "no recent list at KEY"
// and "KEY holds a Redis TYPE, not a recent list".
const recentKind = "recent list"

// recentList returns a List on key that reads and removes every item: Max
// is MaxItems, so that a Remove trims nothing, and MaxAge is maxAge,
// which only the reads take (readRecent; runRecentRemove leaves it 0, so
// that a Remove drops no item for its age).
func recentList(client redis.UniversalClient, key string, maxAge time.Duration) (*recent.List, error) {
	return recent.New(client, recent.Config{Key: key, Max: recent.MaxItems, MaxAge: maxAge})
}

// A recentRead says what readRecent reads of a recent list: its items
// after the offset newest, at most count of them (none for 0), and the
// MaxAge to read them and count them with: maxAge when maxAgeSet, else
// the one its Lists recorded. anyRecord takes a bounds record that cannot
// be read as none, for a look that shows what it can read (ls).
type recentRead struct {
	offset, count int64
	maxAge        time.Duration
	maxAgeSet     bool
	anyRecord     bool
}

// A recentView is a recent list as recent list, ls and the page show it.
type recentView struct {
	bounds recent.Config // the bounds its Lists recorded (List.Recorded)
	known  bool          // bounds are recorded
	maxAge time.Duration // the MaxAge that items and total were read with
	items  []recent.Item // newest first
	total  int64         // the items within MaxAge, with List.Len
}

// readRecent reads the recent list at key as rd says: the bounds its
// Lists recorded, with List.Recorded, then its items, with List.Items,
// and their count, with List.Len, on a List that leaves out the items
// older than the MaxAge rd picks. None of them writes.
func readRecent(ctx context.Context, client redis.UniversalClient, key string, rd recentRead) (recentView, error) {
	l, err := recentList(client, key, 0)
	if err != nil {
		return recentView{}, err
	}
	var v recentView
	v.bounds, v.known, err = l.Recorded(ctx)
	if err != nil && !rd.anyRecord {
		return recentView{}, err
	}
	v.maxAge = rd.maxAge
	if !rd.maxAgeSet && v.known {
		v.maxAge = v.bounds.MaxAge
	}
	if v.maxAge > 0 {
		if l, err = recentList(client, key, v.maxAge); err != nil {
			return recentView{}, err
		}
	}
	if rd.count > 0 {
		if v.items, err = l.Items(ctx, rd.offset, rd.count); err != nil {
			return recentView{}, err
		}
	}
	v.total, err = l.Len(ctx)
	return v, err
}

type itemJSON struct {
	Value string    `json:"value"`
	At    time.Time `json:"at"`
}

// runRecentList prints the list's items, newest first, each with the
// server's time of its last Add, and the bounds its Lists recorded
// (List.Recorded), when they are known. Without -max-age, it leaves out
// the items older than the recorded MaxAge, as the Lists do. A key with no
// item to list is the answer no: "no recent list at KEY".
func runRecentList(c *cli, args []string) error {
	key := args[0]
	switch {
	case c.n < 0:
		return usageErrorf("-n %d: a count is at least 0", c.n)
	case c.offset < 0:
		return usageErrorf("-offset %d: at least 0", c.offset)
	case c.maxAge < 0:
		return usageErrorf("-max-age %v: at least 0", c.maxAge)
	}
	count := int64(c.n)
	if count == 0 {
		count = recent.MaxItems
	}
	ctx, cancel := c.call()
	defer cancel()
	v, err := readRecent(ctx, c.client, key, recentRead{offset: c.offset, count: count, maxAge: c.maxAge, maxAgeSet: c.maxAgeSet})
	if err != nil {
		return c.wrongType(err, recentKind, key)
	}
	bounds, known, maxAge, items, total := v.bounds, v.known, v.maxAge, v.items, v.total
	if c.json {
		out := make([]itemJSON, 0, len(items))
		for _, it := range items {
			out = append(out, itemJSON{Value: it.Value, At: it.At.UTC().Truncate(time.Millisecond)})
		}
		if err := c.writeJSON(out); err != nil || total > 0 {
			return err
		}
		return c.none(recentKind, key)
	}
	if total == 0 {
		return c.none(recentKind, key)
	}
	shown := plural(len(items), "item")
	if c.offset > 0 {
		shown += fmt.Sprintf(" after the %d newest", c.offset)
	}
	fmt.Fprintf(c.stdout, "%s: %s, newest first; %s in all\n", key, shown, plural(int(total), "item"))
	switch {
	case known:
		age := "none"
		if bounds.MaxAge > 0 {
			age = bounds.MaxAge.String()
		}
		fmt.Fprintf(c.stdout, "bounds: max %d, max age %s, as its Lists recorded them\n", bounds.Max, age)
	default:
		fmt.Fprintln(c.stdout, "bounds: unknown (no List has recorded them lately; a list that never lapses keeps its record a day)")
	}
	if c.maxAgeSet && maxAge > 0 {
		fmt.Fprintf(c.stdout, "items older than %v left out (-max-age)\n", maxAge)
	}
	if len(items) == 0 {
		return nil
	}
	fmt.Fprintln(c.stdout)
	t := newTable(c.stdout, "#", "VALUE", "ADDED AT (SERVER CLOCK)")
	for i, it := range items {
		t.row(c.offset+int64(i)+1, clip(display(it.Value), 80), it.At.UTC().Format(clockFormat))
	}
	t.flush()
	return nil
}

type removeJSON struct {
	Key     string   `json:"key"`
	Values  []string `json:"values"`
	Removed int64    `json:"removed"`
}

// recentScan is the most items runRecentRemove reads to tell which values
// were in the list.
const recentScan = 10_000

// runRecentRemove takes values out of the list with List.Remove. None
// removed is the answer no, and so is a key that holds no item: "no
// recent list at KEY", with nothing written.
//
// A Remove that go-redis sent again, its reply lost, counts only the
// values its second run found, so it may count fewer than it removed.
// When the list is short enough to read whole (recentScan items), the
// command reads it before and, if Remove counts fewer than were there,
// after: a value that was in the list before and is not after was
// removed, by this call or, in the moment between, by another.
func runRecentRemove(c *cli, args []string) error {
	key, values := args[0], args[1:]
	l, err := recentList(c.client, key, 0)
	if err != nil {
		return err
	}
	before, total, err := c.itemsAmong(l, values)
	if err != nil {
		return err
	}
	out := removeJSON{Key: key, Values: values}
	if total == 0 {
		if c.json {
			if err := c.writeJSON(out); err != nil {
				return err
			}
		}
		return c.none(recentKind, key)
	}
	ctx, cancel := c.call()
	defer cancel()
	n, err := l.Remove(ctx, values...)
	if err != nil {
		return c.wrongType(err, recentKind, key)
	}
	if total <= recentScan && n < int64(len(before)) {
		after, _, err := c.itemsAmong(l, values)
		if err != nil {
			return err
		}
		var gone int64
		for _, v := range before {
			if !slices.Contains(after, v) {
				gone++
			}
		}
		n = max(n, gone)
	}
	out.Removed = n
	if c.json {
		err = c.writeJSON(out)
	} else {
		note := ""
		if missing := len(values) - int(n); missing > 0 {
			note = fmt.Sprintf(" (%d not in the list)", missing)
		}
		fmt.Fprintf(c.stdout, "removed %d of %s from %s%s\n", n, plural(len(values), "value"), key, note)
	}
	if err == nil && n == 0 {
		return errNo
	}
	return err
}

// itemsAmong returns the values among values that are in l, each once,
// and the items l holds: it reads the list only when it holds at most
// recentScan items, so above that it cannot tell, and returns none.
func (c *cli) itemsAmong(l *recent.List, values []string) ([]string, int64, error) {
	ctx, cancel := c.call()
	defer cancel()
	total, err := l.Len(ctx)
	if err != nil || total == 0 || total > recentScan {
		return nil, total, c.wrongType(err, recentKind, l.Config().Key)
	}
	items, err := l.Items(ctx, 0, recentScan)
	if err != nil {
		return nil, 0, err
	}
	var found []string
	for _, it := range items {
		if slices.Contains(values, it.Value) && !slices.Contains(found, it.Value) {
			found = append(found, it.Value)
		}
	}
	return found, total, nil
}
