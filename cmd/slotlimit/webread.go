package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// What the page reads of each kind of primitive, through the library's
// own calls: a reading, sampled once a second, and a detail, read when
// the primitive's own page asks. The commands of each package read the
// same (limiter.go, lock.go, ...); the two could later share these.

// The kinds the page shows, as slotlimit ls names them.
const (
	webLimiter  = "limiter"
	webCounter  = "counter"
	webLock     = "lock"
	webQueue    = "delay queue"
	webRecent   = "recent list"
	webPacket   = "red packet"
	webRate     = "rate limit"
	webAdaptive = "adaptive limit"
)

// A webItem is one primitive found: its kind and key. For a red packet,
// the key is its packet's key, "{P:n}:redpacket:p:ID".
type webItem struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
}

// A reading is one sample of a primitive: its state in one line, and its
// figures, in the order of its kind's series; nil for one unknown.
type reading struct {
	line string
	vals []*float64
}

// A plotSpec is one plot of a kind: a title and the series it draws.
type plotSpec struct {
	Title  string   `json:"title"`
	Series []string `json:"series"`
}

// A kindSpec is what the page knows of a kind: its series, its plots, and
// how to read a sample and a detail.
type kindSpec struct {
	Name   string     `json:"name"`
	Series []string   `json:"series"`
	Plots  []plotSpec `json:"plots"`
	read   func(r *webReader, ctx context.Context, key string) (reading, error)
	detail func(r *webReader, ctx context.Context, key string) (detail, error)
}

// webKinds is every kind, in the order the page lists them.
var webKinds = []kindSpec{
	{Name: webLimiter, Series: []string{"in use", "limit"},
		Plots: []plotSpec{{"units in use against the limit", []string{"in use", "limit"}}},
		read:  (*webReader).readLimiter, detail: (*webReader).detailLimiter},
	{Name: webCounter, Series: []string{"in use", "limit"},
		Plots: []plotSpec{{"units in use against the limit", []string{"in use", "limit"}}},
		read:  (*webReader).readCounter, detail: (*webReader).detailCounter},
	{Name: webAdaptive, Series: []string{"limit", "in flight", "waiting"},
		Plots: []plotSpec{{"the limit against the calls in flight", []string{"limit", "in flight"}}},
		read:  (*webReader).readAdaptive, detail: (*webReader).detailAdaptive},
	{Name: webQueue, Series: []string{"ready", "delayed", "in flight", "dead", "lateness (s)"},
		Plots: []plotSpec{{"depths", []string{"ready", "delayed", "in flight", "dead"}}, {"lateness: age of the oldest due message (s)", []string{"lateness (s)"}}},
		read:  (*webReader).readQueue, detail: (*webReader).detailQueue},
	{Name: webRate, Series: []string{"allowed now", "burst"},
		Plots: []plotSpec{{"events allowed now", []string{"allowed now", "burst"}}},
		read:  (*webReader).readRate, detail: (*webReader).detailRate},
	{Name: webLock, Series: []string{"held", "waiting"},
		read: (*webReader).readLock, detail: (*webReader).detailLock},
	{Name: webRecent, Series: []string{"items"},
		Plots: []plotSpec{{"items", []string{"items"}}},
		read:  (*webReader).readRecent, detail: (*webReader).detailRecent},
	{Name: webPacket, Series: []string{"shares left"},
		Plots: []plotSpec{{"shares left", []string{"shares left"}}},
		read:  (*webReader).readPacket, detail: (*webReader).detailPacket},
}

// kindOf returns the spec of the kind named name.
func kindOf(name string) (*kindSpec, bool) {
	for i := range webKinds {
		if webKinds[i].Name == name {
			return &webKinds[i], true
		}
	}
	return nil, false
}

// A detail is what a primitive's own page shows: lines of label and
// value, tables, and the writes it offers.
type detail struct {
	Kind    string        `json:"kind"`
	Key     string        `json:"key"`
	Summary [][2]string   `json:"summary"`
	Tables  []detailTable `json:"tables"`
	Actions []webAction   `json:"actions,omitempty"` // on the primitive as a whole
	Note    string        `json:"note,omitempty"`
}

// A detailTable is a table of a detail. Its Actions are offered on each
// row, with the row's cell ArgCol as their argument.
type detailTable struct {
	Title   string      `json:"title"`
	Columns []string    `json:"columns"`
	Rows    [][]string  `json:"rows"`
	Actions []webAction `json:"actions,omitempty"`
}

// A webAction is a write the page offers: POST /api/write with kind,
// key, action and arg. Label is the button's text, and Confirm the
// question asked first.
type webAction struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	Arg     string `json:"arg,omitempty"`
	ArgCol  int    `json:"arg_col,omitempty"`
	Confirm string `json:"confirm"`
}

// A webReader reads primitives for the page, keeping a handle per key.
type webReader struct {
	client redis.UniversalClient

	mu      sync.Mutex
	handles map[webItem]any
}

func newWebReader(client redis.UniversalClient) *webReader {
	return &webReader{client: client, handles: make(map[webItem]any)}
}

// handle returns the handle of kind on key, made by mk the first time.
func handle[T any](r *webReader, kind, key string, mk func() (T, error)) (T, error) {
	it := webItem{kind, key}
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.handles[it]; ok {
		return h.(T), nil
	}
	h, err := mk()
	if err != nil {
		return h, err
	}
	if len(r.handles) >= 4*maxSampled {
		clear(r.handles)
	}
	r.handles[it] = h
	return h, nil
}

// forget drops the handles of the keys not in keep.
func (r *webReader) forget(keep map[webItem]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for it := range r.handles {
		if !keep[it] {
			delete(r.handles, it)
		}
	}
}

// readRecord reads the settings record NAME beside key; nil when there
// is none.
func (r *webReader) readRecord(ctx context.Context, key, name string) (url.Values, error) {
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return nil, nil
	}
	return record.Read(ctx, r.client, prefix+name)
}

// recordInt returns the field of rec as a number, and whether it is one.
func recordInt(rec url.Values, field string) (int64, bool) {
	n, err := strconv.ParseInt(rec.Get(field), 10, 64)
	return n, err == nil
}

func num(n int64) *float64 {
	f := float64(n)
	return &f
}

func secs(d time.Duration) *float64 {
	f := d.Seconds()
	return &f
}

func (r *webReader) limiter(key string) (*slotlimit.Limiter, error) {
	return handle(r, webLimiter, key, func() (*slotlimit.Limiter, error) {
		return slotlimit.New(r.client, slotlimit.Config{Key: key, Limit: slotlimit.MaxLimit})
	})
}

// limiterLimit returns the limit of a limiter or counter: its record's,
// else the highest its waiters' entries record; 0 when unknown.
func (r *webReader) limiterLimit(ctx context.Context, key string, queue []slotlimit.Waiter) (int64, error) {
	rec, err := r.readRecord(ctx, key, "limit")
	if err != nil {
		return 0, err
	}
	if n, ok := recordInt(rec, "limit"); ok && n > 0 {
		return n, nil
	}
	var limit int64
	for _, q := range queue {
		limit = max(limit, q.Limit)
	}
	return limit, nil
}

// ofLimit describes n units in use against limit, 0 when unknown.
func ofLimit(n, limit int64) string {
	if limit == 0 {
		return plural(int(n), "unit") + " in use, limit unknown"
	}
	return fmt.Sprintf("%d of %d units in use", n, limit)
}

func limitVal(limit int64) *float64 {
	if limit == 0 {
		return nil
	}
	return num(limit)
}

func (r *webReader) readLimiter(ctx context.Context, key string) (reading, error) {
	l, err := r.limiter(key)
	if err != nil {
		return reading{}, err
	}
	snap, err := l.Inspect(ctx)
	if err != nil {
		return reading{}, err
	}
	limit, err := r.limiterLimit(ctx, key, snap.Queue)
	if err != nil {
		return reading{}, err
	}
	line := fmt.Sprintf("%s by %s, %d waiting", ofLimit(snap.InUse, limit), plural(len(snap.Holders), "holder"), len(snap.Queue))
	return reading{line, []*float64{num(snap.InUse), limitVal(limit)}}, nil
}

func (r *webReader) detailLimiter(ctx context.Context, key string) (detail, error) {
	l, err := r.limiter(key)
	if err != nil {
		return detail{}, err
	}
	snap, err := l.Inspect(ctx)
	if err != nil {
		return detail{}, err
	}
	limit, err := r.limiterLimit(ctx, key, snap.Queue)
	if err != nil {
		return detail{}, err
	}
	d := detail{Summary: [][2]string{
		{"in use", ofLimit(snap.InUse, limit)},
		{"holders", strconv.Itoa(len(snap.Holders))},
		{"waiting", strconv.Itoa(len(snap.Queue))},
		{"server clock", snap.ServerTime.UTC().Format(clockFormat)},
	}}
	holders := detailTable{Title: "holders", Columns: []string{"holder", "units", "time left", "expires at (server clock)"}, Rows: [][]string{},
		Actions: []webAction{{Name: "release", Label: "force-release", ArgCol: 0,
			Confirm: "Force-release this holder? Its units go to the first waiters that fit, as a release's do."}}}
	for _, h := range snap.Holders {
		holders.Rows = append(holders.Rows, []string{h.ID, strconv.FormatInt(h.Weight, 10), left(h.ExpiresAt.Sub(snap.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat)})
	}
	queue := detailTable{Title: "waiters, in arrival order", Columns: []string{"waiter", "units", "limit", "lease", "entry lapses in"}, Rows: [][]string{}}
	for _, q := range snap.Queue {
		queue.Rows = append(queue.Rows, []string{q.ID, strconv.FormatInt(q.Units, 10), orDash(q.Limit), q.TTL.String(), left(q.EntryExpiresAt.Sub(snap.ServerTime))})
	}
	d.Tables = []detailTable{holders, queue}
	return d, nil
}

// release force-releases holder, as slotlimit release does.
func (r *webReader) release(ctx context.Context, key, holder string) (string, error) {
	probe, err := r.limiter(key)
	if err != nil {
		return "", err
	}
	snap, err := probe.Inspect(ctx)
	if err != nil {
		return "", err
	}
	limit, err := r.limiterLimit(ctx, key, snap.Queue)
	if err != nil {
		return "", err
	}
	// The limit names the full marker the release ends; unknown, the
	// key is not full.
	l, err := slotlimit.New(r.client, slotlimit.Config{Key: key, Limit: cmp0(limit, slotlimit.MaxLimit)})
	if err != nil {
		return "", err
	}
	if err := l.Release(ctx, holder); errors.Is(err, slotlimit.ErrNotHeld) {
		return fmt.Sprintf("%s held nothing on %s: nothing released", display(holder), key), errNo
	} else if err != nil {
		return "", err
	}
	return fmt.Sprintf("released %s on %s", display(holder), key), nil
}

// cmp0 returns n, or def when n is 0.
func cmp0(n, def int64) int64 {
	if n == 0 {
		return def
	}
	return n
}

func (r *webReader) counter(key string) (*slotlimit.Counter, error) {
	return handle(r, webCounter, key, func() (*slotlimit.Counter, error) {
		return slotlimit.NewCounter(r.client, slotlimit.Config{Key: key, Limit: slotlimit.MaxLimit})
	})
}

func (r *webReader) readCounter(ctx context.Context, key string) (reading, error) {
	c, err := r.counter(key)
	if err != nil {
		return reading{}, err
	}
	n, err := c.Count(ctx)
	if err != nil {
		return reading{}, err
	}
	limit, err := r.limiterLimit(ctx, key, nil)
	if err != nil {
		return reading{}, err
	}
	return reading{ofLimit(n, limit), []*float64{num(n), limitVal(limit)}}, nil
}

func (r *webReader) detailCounter(ctx context.Context, key string) (detail, error) {
	rd, err := r.readCounter(ctx, key)
	if err != nil {
		return detail{}, err
	}
	return detail{Summary: [][2]string{{"in use", rd.line}}, Note: "A counter keeps a count, not holders."}, nil
}

func (r *webReader) adaptive(ctx context.Context, key string) (adaptive.Info, url.Values, error) {
	l, err := handle(r, webAdaptive, key, func() (*adaptive.Limiter, error) {
		// Min 1 and the highest Max read the limit as stored.
		return adaptive.New(r.client, adaptive.Config{Key: key, Min: 1, Max: adaptiveMaxLimit})
	})
	if err != nil {
		return adaptive.Info{}, nil, err
	}
	info, err := l.Inspect(ctx)
	if err != nil {
		return adaptive.Info{}, nil, err
	}
	rec, err := r.readRecord(ctx, key, "adaptive:bounds")
	return info, rec, err
}

// bounds describes an adaptive limit's bounds from its record.
func bounds(rec url.Values) string {
	lo, ok1 := recordInt(rec, "min")
	hi, ok2 := recordInt(rec, "max")
	if !ok1 || !ok2 {
		return "bounds unknown"
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

func (r *webReader) readAdaptive(ctx context.Context, key string) (reading, error) {
	info, rec, err := r.adaptive(ctx, key)
	if err != nil {
		return reading{}, err
	}
	limit := limitVal(info.Limit)
	line := fmt.Sprintf("limit %d (%s), %d in flight, %d waiting", info.Limit, bounds(rec), info.InUse, info.Waiters)
	if !info.Stored {
		limit = nil
		line = fmt.Sprintf("no limit stored, %d in flight, %d waiting", info.InUse, info.Waiters)
	}
	return reading{line, []*float64{limit, num(info.InUse), num(info.Waiters)}}, nil
}

func (r *webReader) detailAdaptive(ctx context.Context, key string) (detail, error) {
	info, rec, err := r.adaptive(ctx, key)
	if err != nil {
		return detail{}, err
	}
	limit := strconv.FormatInt(info.Limit, 10)
	if !info.Stored {
		limit = "none stored"
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format(clockFormat)
	}
	d := detail{Summary: [][2]string{
		{"limit", limit}, {"bounds", bounds(rec)}, {"in flight", strconv.FormatInt(info.InUse, 10)},
		{"waiting", strconv.FormatInt(info.Waiters, 10)}, {"last went down", when(info.LastDecrease)},
		{"last went up", when(info.LastIncrease)}, {"server clock", info.ServerTime.UTC().Format(clockFormat)},
	}}
	holders := detailTable{Title: "holders", Columns: []string{"holder", "time left", "expires at (server clock)"}, Rows: [][]string{}}
	for _, h := range info.Holders {
		holders.Rows = append(holders.Rows, []string{h.ID, left(h.ExpiresAt.Sub(info.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{holders}
	return d, nil
}

func (r *webReader) queue(key string) (*delayqueue.Queue, error) {
	return handle(r, webQueue, key, func() (*delayqueue.Queue, error) {
		return delayqueue.New(r.client, delayqueue.Config{Key: key})
	})
}

// queueLen reads a delay queue's counts at one instant.
func (r *webReader) queueLen(ctx context.Context, key string) (q *delayqueue.Queue, ready, delayed, inflight, dead int64, err error) {
	if q, err = r.queue(key); err != nil {
		return
	}
	ready, delayed, inflight, dead, err = q.Len(ctx)
	return
}

func (r *webReader) readQueue(ctx context.Context, key string) (reading, error) {
	_, ready, delayed, inflight, dead, err := r.queueLen(ctx, key)
	if err != nil {
		return reading{}, err
	}
	// The age of the oldest due message needs a listing of the ready
	// messages, which the package does not offer yet: unknown.
	line := fmt.Sprintf("%d ready, %d delayed, %d in flight, %d dead", ready, delayed, inflight, dead)
	return reading{line, []*float64{num(ready), num(delayed), num(inflight), num(dead), nil}}, nil
}

func (r *webReader) detailQueue(ctx context.Context, key string) (detail, error) {
	q, ready, delayed, inflight, dead, err := r.queueLen(ctx, key)
	if err != nil {
		return detail{}, err
	}
	d := detail{Summary: [][2]string{
		{"ready", strconv.FormatInt(ready, 10)}, {"delayed", strconv.FormatInt(delayed, 10)},
		{"in flight", strconv.FormatInt(inflight, 10)}, {"dead", strconv.FormatInt(dead, 10)},
	}, Note: "Ready, delayed and in-flight messages are counted, not listed; dead letters are listed, oldest first."}
	letters, err := q.DeadLetters(ctx, detailRows)
	if err != nil {
		return detail{}, err
	}
	t := detailTable{Title: "dead letters", Columns: []string{"id", "attempts", "dead since (server clock)", "bytes", "payload"}, Rows: [][]string{},
		Actions: []webAction{
			{Name: "requeue", Label: "requeue", ArgCol: 0, Confirm: "Move this dead letter back to the queue, due now?"},
			{Name: "drop", Label: "drop", ArgCol: 0, Confirm: "Delete this dead letter for good?"},
		}}
	for _, m := range letters {
		t.Rows = append(t.Rows, []string{m.ID, strconv.Itoa(m.Attempt), m.DueAt.UTC().Format(clockFormat), strconv.Itoa(len(m.Payload)), clip(text(m.Payload), 200)})
	}
	d.Tables = []detailTable{t}
	return d, nil
}

// detailRows bounds the rows a detail lists of one table.
const detailRows = 100

// rateLimit returns the limit recorded beside key, and whether there is
// one.
func (r *webReader) rateLimit(ctx context.Context, key string) (ratelimit.Limit, bool, error) {
	rec, err := r.readRecord(ctx, key, "ratelimit:rate")
	if err != nil || rec == nil {
		return ratelimit.Limit{}, false, err
	}
	rate, ok1 := recordInt(rec, "rate")
	period, ok2 := recordInt(rec, "period")
	burst, _ := recordInt(rec, "burst")
	if !ok1 || !ok2 {
		return ratelimit.Limit{}, false, nil
	}
	l := ratelimit.Limit{Rate: rate, Period: time.Duration(period) * time.Millisecond, Burst: burst}
	if rec.Get("algorithm") == "fixed-window" {
		l.Algorithm = ratelimit.FixedWindow
	}
	return l, l.Validate() == nil, nil
}

func (r *webReader) rateState(ctx context.Context, key string) (ratelimit.Result, bool, error) {
	limit, ok, err := r.rateLimit(ctx, key)
	if err != nil || !ok {
		return ratelimit.Result{}, false, err
	}
	l, err := handle(r, webRate, "", func() (*ratelimit.Limiter, error) { return ratelimit.New(r.client, ratelimit.Config{}) })
	if err != nil {
		return ratelimit.Result{}, false, err
	}
	res, err := l.AllowN(ctx, key, limit, 0)
	return res, err == nil, err
}

// burstOf returns the most events res's limit allows at once.
func burstOf(l ratelimit.Limit) int64 {
	if l.Algorithm == ratelimit.FixedWindow || l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

func (r *webReader) readRate(ctx context.Context, key string) (reading, error) {
	res, ok, err := r.rateState(ctx, key)
	if err != nil {
		return reading{}, err
	}
	if !ok {
		return reading{"limit unknown", []*float64{nil, nil}}, nil
	}
	line := fmt.Sprintf("%v, %d allowed now", res.Limit, res.Remaining)
	return reading{line, []*float64{num(res.Remaining), num(burstOf(res.Limit))}}, nil
}

func (r *webReader) detailRate(ctx context.Context, key string) (detail, error) {
	res, ok, err := r.rateState(ctx, key)
	if err != nil {
		return detail{}, err
	}
	if !ok {
		return detail{Summary: [][2]string{{"limit", "limit unknown"}},
			Note: "The limit is read from the record beside the key, which the Limiters write while they are used."}, nil
	}
	full := "now"
	if res.ResetAfter > 0 {
		full = "in " + left(res.ResetAfter)
	}
	return detail{Summary: [][2]string{{"limit", res.Limit.String()}, {"allowed now", plural(int(res.Remaining), "event")}, {"full again", full}},
		Actions: []webAction{{Name: "reset", Label: "reset", Confirm: "Give this key its full allowance again?"}}}, nil
}

// resetRate gives key its full allowance again, under its recorded limit.
func (r *webReader) resetRate(ctx context.Context, key string) (string, error) {
	limit, ok, err := r.rateLimit(ctx, key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "limit unknown: nothing reset", errNo
	}
	l, err := ratelimit.New(r.client, ratelimit.Config{})
	if err != nil {
		return "", err
	}
	if err := l.Reset(ctx, key, limit); err != nil {
		return "", err
	}
	return fmt.Sprintf("reset %s, %v", display(key), limit), nil
}

func (r *webReader) mutex(key string) (*lock.Mutex, error) {
	return handle(r, webLock, key, func() (*lock.Mutex, error) { return lock.New(r.client, lock.Config{Key: key}) })
}

func (r *webReader) readLock(ctx context.Context, key string) (reading, error) {
	m, err := r.mutex(key)
	if err != nil {
		return reading{}, err
	}
	info, err := m.Inspect(ctx)
	if err != nil {
		return reading{}, err
	}
	held, line := 0.0, "free"
	if info.Held() {
		held, line = 1, "held, "+ttl(info.TTL)+" left"
		if owner := lockOwner(info); owner != "" {
			line += ", owner " + owner
		}
	}
	line += fmt.Sprintf(", %d waiting", info.Waiters)
	return reading{line, []*float64{&held, num(info.Waiters)}}, nil
}

// lockOwner returns the owner description of a lock's snapshot; "" when
// it has none.
func lockOwner(lock.Info) string { return "" }

func (r *webReader) detailLock(ctx context.Context, key string) (detail, error) {
	m, err := r.mutex(key)
	if err != nil {
		return detail{}, err
	}
	info, err := m.Inspect(ctx)
	if err != nil {
		return detail{}, err
	}
	d := detail{}
	if !info.Held() {
		d.Summary = append(d.Summary, [2]string{"state", "free"})
	} else {
		owner := lockOwner(info)
		if owner == "" {
			owner = "unknown"
		}
		d.Summary = append(d.Summary, [2]string{"state", "held"}, [2]string{"owner", owner},
			[2]string{"owner token", info.Token}, [2]string{"time left", ttl(info.TTL)})
		d.Actions = []webAction{{Name: "break", Label: "break the lock", Arg: info.Token,
			Confirm: "Break this lock, as its owner's unlock would? The first waiter is handed it."}}
	}
	d.Summary = append(d.Summary, [2]string{"waiting", strconv.FormatInt(info.Waiters, 10)},
		[2]string{"fence floor", fmt.Sprintf("%d µs: the owner's fence is at most this, every later owner's higher", info.FenceFloor)})
	return d, nil
}

// breakLock breaks the lock held under token.
func (r *webReader) breakLock(ctx context.Context, key, token string) (string, error) {
	m, err := r.mutex(key)
	if err != nil {
		return "", err
	}
	if err := m.Break(ctx, token); errors.Is(err, lock.ErrNotHeld) {
		return fmt.Sprintf("lock %s changed hands or lapsed before the break: nothing done", key), errNo
	} else if err != nil {
		return "", err
	}
	return fmt.Sprintf("broke lock %s", key), nil
}

func (r *webReader) list(ctx context.Context, key string) (*recent.List, url.Values, error) {
	rec, err := r.readRecord(ctx, key, "recent:bounds")
	if err != nil {
		return nil, nil, err
	}
	maxAge, _ := recordInt(rec, "maxage")
	cfg := recent.Config{Key: key, Max: recent.MaxItems, MaxAge: time.Duration(max(maxAge, 0)) * time.Millisecond}
	// A handle per key and MaxAge, which the record may change.
	l, err := handle(r, webRecent, key+"\x00"+strconv.FormatInt(maxAge, 10), func() (*recent.List, error) { return recent.New(r.client, cfg) })
	return l, rec, err
}

func (r *webReader) readRecent(ctx context.Context, key string) (reading, error) {
	l, _, err := r.list(ctx, key)
	if err != nil {
		return reading{}, err
	}
	n, err := l.Len(ctx)
	if err != nil {
		return reading{}, err
	}
	return reading{plural(int(n), "item"), []*float64{num(n)}}, nil
}

func (r *webReader) detailRecent(ctx context.Context, key string) (detail, error) {
	l, rec, err := r.list(ctx, key)
	if err != nil {
		return detail{}, err
	}
	items, err := l.Items(ctx, 0, detailRows)
	if err != nil {
		return detail{}, err
	}
	n, err := l.Len(ctx)
	if err != nil {
		return detail{}, err
	}
	b := "bounds unknown"
	if m, ok := recordInt(rec, "max"); ok {
		b = fmt.Sprintf("at most %d items", m)
		if age, ok := recordInt(rec, "maxage"); ok && age > 0 {
			b += fmt.Sprintf(", each for at most %v", time.Duration(age)*time.Millisecond)
		}
	}
	d := detail{Summary: [][2]string{{"items", strconv.FormatInt(n, 10)}, {"bounds", b}}}
	t := detailTable{Title: fmt.Sprintf("items, newest first (at most %d)", detailRows), Columns: []string{"value", "last added (server clock)"}, Rows: [][]string{}}
	for _, it := range items {
		t.Rows = append(t.Rows, []string{it.Value, it.At.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{t}
	return d, nil
}

// packetKey splits a red packet's key, "{P:n}:redpacket:p:ID", into the
// Store's prefix, the packet's shard and its ID.
func packetKey(key string) (prefix string, shard int, id string, ok bool) {
	if !strings.HasPrefix(key, "{") {
		return "", 0, "", false
	}
	tag, rest, ok := strings.Cut(key[1:], "}:redpacket:p:")
	if !ok || rest == "" {
		return "", 0, "", false
	}
	i := strings.LastIndexByte(tag, ':')
	if i < 0 {
		return "", 0, "", false
	}
	n, err := strconv.Atoi(tag[i+1:])
	if err != nil || n < 0 || n >= 1024 {
		return "", 0, "", false
	}
	return tag[:i], n, rest, true
}

// packetStore returns a Store that finds the packet at key: one with the
// packet's prefix and a number of shards that puts it in the shard its
// key names. (Every number that does names the same keys.)
func (r *webReader) packetStore(key string) (*redpacket.Store, string, error) {
	prefix, shard, id, ok := packetKey(key)
	if !ok {
		return nil, "", fmt.Errorf("%s is not a red packet's key", display(key))
	}
	sum := crc32.ChecksumIEEE([]byte(id))
	shards := 1
	if shard > 0 {
		shards = 0
		for s := shard + 1; s <= 1024; s++ {
			if int(sum%uint32(s)) == shard {
				shards = s
				break
			}
		}
		if shards == 0 {
			return nil, "", fmt.Errorf("%s: no Store of up to 1024 shards puts packet %s in shard %d", display(key), display(id), shard)
		}
	}
	s, err := handle(r, webPacket, key, func() (*redpacket.Store, error) {
		return redpacket.New(r.client, redpacket.Config{Prefix: prefix, Shards: shards})
	})
	return s, id, err
}

func (r *webReader) readPacket(ctx context.Context, key string) (reading, error) {
	s, id, err := r.packetStore(key)
	if err != nil {
		return reading{}, err
	}
	snap, err := s.Inspect(ctx, id)
	if err != nil {
		return reading{}, err
	}
	line := fmt.Sprintf("%d of %d shares left, %d of %d", snap.SharesLeft, snap.Packet.Count, snap.AmountLeft, snap.Packet.Total)
	return reading{line, []*float64{num(int64(snap.SharesLeft))}}, nil
}

func (r *webReader) detailPacket(ctx context.Context, key string) (detail, error) {
	s, id, err := r.packetStore(key)
	if err != nil {
		return detail{}, err
	}
	snap, err := s.Inspect(ctx, id)
	if err != nil {
		return detail{}, err
	}
	d := detail{Summary: [][2]string{
		{"packet", id}, {"split", snap.Packet.Split.String()},
		{"shares left", fmt.Sprintf("%d of %d", snap.SharesLeft, snap.Packet.Count)},
		{"amount left", fmt.Sprintf("%d of %d", snap.AmountLeft, snap.Packet.Total)},
		{"created", snap.CreatedAt.UTC().Format(clockFormat)},
		{"expires", snap.ExpiresAt.UTC().Format(clockFormat)},
		{"persister", r.persisterLag(ctx, key)},
	}}
	t := detailTable{Title: "claims, in the order taken", Columns: []string{"seq", "user", "amount", "at (server clock)"}, Rows: [][]string{}}
	for _, cl := range snap.Claims {
		t.Rows = append(t.Rows, []string{strconv.Itoa(cl.Seq), cl.User, strconv.FormatInt(cl.Amount, 10), cl.At.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{t}
	return d, nil
}

// persisterLag describes how far the persisters of the packet's shard
// are behind its claim log: the entries not yet read (lag) and those read
// and not yet written (pending), of each consumer group on the log.
func (r *webReader) persisterLag(ctx context.Context, key string) string {
	i := strings.Index(key, "}:redpacket:p:")
	if i < 0 {
		return "unknown"
	}
	groups, err := r.client.XInfoGroups(ctx, key[:i+1]+":redpacket:log").Result()
	switch {
	case err != nil && strings.Contains(err.Error(), "no such key"):
		return "no claim log"
	case err != nil:
		return "unknown: " + err.Error()
	case len(groups) == 0:
		return "no persister has read the claim log"
	}
	var parts []string
	for _, g := range groups {
		lag := "lag unknown"
		if g.Lag >= 0 {
			lag = fmt.Sprintf("%d entries behind", g.Lag)
		}
		parts = append(parts, fmt.Sprintf("group %s: %s, %d pending", display(g.Name), lag, g.Pending))
	}
	return strings.Join(parts, "; ")
}
