package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
)

// The commands of package adaptive: adaptive show and adaptive watch.

// adaptiveMaxLimit is the highest Config.Max that adaptive.New takes
// (below 2^26): without -max, the commands read with it, so that the
// limit is shown as stored.
const adaptiveMaxLimit = 1<<26 - 1

// historyLen is the most screens whose limit and slots in use adaptive
// watch shows side by side.
const historyLen = 20

func adaptiveFlags(fs *flag.FlagSet, c *cli) {
	fs.Int64Var(&c.minLimit, "min", 0, "the Limiters' Config.Min `N`; -min or -max replaces both bounds the Limiters recorded beside the limit, which is then shown and read kept within those given")
	fs.Int64Var(&c.maxLimit, "max", 0, "the Limiters' Config.Max `N`; -min or -max replaces both bounds the Limiters recorded beside the limit, which is then shown and read kept within those given")
}

func adaptiveWatchFlags(fs *flag.FlagSet, c *cli) {
	adaptiveFlags(fs, c)
	liveFlags(fs, c)
}

// checkBounds refuses -min and -max that no Limiter could have.
func (c *cli) checkBounds() error {
	switch {
	case c.minLimit < 0:
		return usageErrorf("-min %d: a limit is at least 1", c.minLimit)
	case c.maxLimit < 0:
		return usageErrorf("-max %d: a limit is at least 1", c.maxLimit)
	case c.maxLimit > adaptiveMaxLimit:
		return usageErrorf("-max %d: at most %d, below 2^26, as adaptive.Config.Max", c.maxLimit, adaptiveMaxLimit)
	case c.maxLimit > 0 && c.minLimit > c.maxLimit:
		return usageErrorf("-min %d is above -max %d", c.minLimit, c.maxLimit)
	}
	return nil
}

// adaptiveRead is how the commands read an adaptive limit: within -min
// and -max when either is given, else within the bounds its Limiters
// recorded.
func (c *cli) adaptiveRead() adaptiveRead {
	return adaptiveRead{given: adaptiveBounds{min: c.minLimit, max: c.maxLimit}, within: true}
}

// adaptiveBounds are the Min and Max that an adaptive limit is shown
// with: those given (-min and -max), or those its Limiters recorded
// beside the limit (Limiter.Recorded); 0 when neither.
type adaptiveBounds struct {
	min, max int64
	recorded bool // min and max are the bounds recorded
}

// An adaptiveRead says how readAdaptive reads an adaptive limit: with
// the bounds given, when either is above 0, else with those its Limiters
// recorded; and, when within, the limit within those bounds, as the
// Limiters with them read it, else as stored. anyRecord takes a bounds
// record that cannot be read as none, for a look that shows what it can
// read (ls).
type adaptiveRead struct {
	given     adaptiveBounds
	within    bool
	anyRecord bool
}

// findBounds returns the bounds that rd gives, else those the Limiters
// of key recorded, with Limiter.Recorded, which writes nothing: none when
// they recorded none, or a Max above what adaptive.New takes.
func findBounds(ctx context.Context, client redis.UniversalClient, key string, rd adaptiveRead) (adaptiveBounds, error) {
	if rd.given.min > 0 || rd.given.max > 0 {
		return rd.given, nil
	}
	l, err := newAdaptive(client, key, adaptiveBounds{})
	if err != nil {
		return adaptiveBounds{}, err
	}
	lo, hi, ok, err := l.Recorded(ctx)
	if err != nil && !rd.anyRecord {
		return adaptiveBounds{}, err
	}
	if err != nil || !ok || hi > adaptiveMaxLimit {
		return adaptiveBounds{}, nil
	}
	return adaptiveBounds{min: lo, max: hi, recorded: true}, nil
}

// newAdaptive returns a Limiter on key that reads the limit within b: its
// Min is b.min, at least 1, and its Max b.max, else adaptiveMaxLimit, so
// that with no bounds it reads the limit as stored. It is only given
// Recorded and Inspect to call, which write nothing, and its Initial
// plays no part: a key that holds no limit is shown as such.
func newAdaptive(client redis.UniversalClient, key string, b adaptiveBounds) (*adaptive.Limiter, error) {
	cfg := adaptive.Config{Key: key, Min: max(1, b.min), Max: b.max}
	if cfg.Max == 0 {
		cfg.Max = max(adaptiveMaxLimit, cfg.Min)
	}
	return adaptive.New(client, cfg)
}

// inspectAdaptive reads the view of l's key, shown with the bounds b,
// with Limiter.Inspect, which writes nothing.
func inspectAdaptive(ctx context.Context, l *adaptive.Limiter, b adaptiveBounds) (adaptiveView, error) {
	info, err := l.Inspect(ctx)
	if err != nil {
		return adaptiveView{}, err
	}
	return adaptiveView{key: l.Config().Key, adaptiveBounds: b, info: info}, nil
}

// readAdaptive reads the adaptive limit at key as rd says: its bounds,
// with findBounds, then its Info, with inspectAdaptive, on a Limiter
// within those bounds or reading the limit as stored. adaptive show, ls
// and the page show what it returns; adaptive watch finds the bounds
// once, and inspects again for each screen.
func readAdaptive(ctx context.Context, client redis.UniversalClient, key string, rd adaptiveRead) (adaptiveView, error) {
	b, err := findBounds(ctx, client, key, rd)
	if err != nil {
		return adaptiveView{}, err
	}
	var within adaptiveBounds
	if rd.within {
		within = b
	}
	l, err := newAdaptive(client, key, within)
	if err != nil {
		return adaptiveView{}, err
	}
	return inspectAdaptive(ctx, l, b)
}

// adaptiveKind names an adaptive limit in the answers "no adaptive limit
// at KEY" and "KEY holds a Redis TYPE, not an adaptive limit".
const adaptiveKind = "adaptive limit"

// adaptiveView is what adaptive show, each screen of adaptive watch, ls
// and the page read: the Info, and the bounds it is shown with.
type adaptiveView struct {
	key string
	adaptiveBounds
	info adaptive.Info
}

// found reports whether the key holds an adaptive limit: one is stored,
// or slots are held or waited for (a limit lapses a day after it last
// moved, while a lease may outlive it).
func (v adaptiveView) found() bool {
	return v.info.Stored || v.info.InUse > 0 || v.info.Waiters > 0
}

// none is what the commands say of a key that holds no adaptive limit:
// "no adaptive limit at KEY", as c.none says it, and why.
func (v adaptiveView) none() string {
	return fmt.Sprintf("no %s at %s: no slot was ever taken on it, or it was unused for a day (adaptive.StateTTL)", adaptiveKind, display(v.key))
}

// limit describes the limit, with the bounds given: "18", "18 (min 1,
// max 100)", or, when none is stored, why.
func (v adaptiveView) limit() string {
	if !v.info.Stored {
		return "none stored (the next slot taken stores its Limiter's Config.Initial)"
	}
	var bounds []string
	if v.min > 0 {
		bounds = append(bounds, fmt.Sprintf("min %d", v.min))
	}
	if v.max > 0 {
		bounds = append(bounds, fmt.Sprintf("max %d", v.max))
	}
	if len(bounds) == 0 {
		return strconv.FormatInt(v.info.Limit, 10)
	}
	from := "as given"
	if v.recorded {
		from = "as its Limiters recorded them"
	}
	return fmt.Sprintf("%d (%s, %s)", v.info.Limit, strings.Join(bounds, ", "), from)
}

// inUse describes the slots in use against the limit, with a note when
// they are over it.
func (v adaptiveView) inUse() string {
	if !v.info.Stored {
		return plural(int(v.info.InUse), "slot")
	}
	s := fmt.Sprintf("%d of %d slots", v.info.InUse, v.info.Limit)
	if over := v.info.InUse - v.info.Limit; over > 0 {
		s += fmt.Sprintf(" (over the limit, which went down: no slot is granted until %d more are freed)", over+1)
	}
	return s
}

// moved describes when the limit last moved, t, on the server's clock.
func (v adaptiveView) moved(t time.Time, clock string) string {
	if t.IsZero() {
		return "never (within a day)"
	}
	return fmt.Sprintf("%s, %s ago", t.UTC().Format(clock), ago(v.info.ServerTime.Sub(t)))
}

// ago formats the time since a moment on the server's clock, as left
// formats the time until one.
func ago(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return left(d)
}

type adaptiveJSON struct {
	Key          string               `json:"key"`
	ServerTime   time.Time            `json:"server_time"`
	Stored       bool                 `json:"stored"`
	Limit        *int64               `json:"limit"`  // null when none is stored
	Min          *int64               `json:"min"`    // -min, or as recorded; null when neither
	Max          *int64               `json:"max"`    // -max, or as recorded; null when neither
	Bounds       string               `json:"bounds"` // "given", "recorded", or "unknown"
	InUse        int64                `json:"in_use"`
	Waiters      int64                `json:"waiters"`
	LastDecrease *time.Time           `json:"last_decrease"` // null when never, within a day
	LastIncrease *time.Time           `json:"last_increase"`
	DropDelayMs  int64                `json:"drop_delay_ms"`      // 0 when no drop counted
	LatencyUs    int64                `json:"latency_us"`         // the recent latency; 0 when none is known
	NoLoadMs     int64                `json:"no_load_latency_ms"` // 0 when none is known
	Holders      []adaptiveHolderJSON `json:"holders"`
}

type adaptiveHolderJSON struct {
	ID        string    `json:"id"`
	TTLMillis int64     `json:"ttl_ms"` // time left, on the server's clock
	ExpiresAt time.Time `json:"expires_at"`
}

func (v adaptiveView) json() adaptiveJSON {
	info := v.info
	out := adaptiveJSON{
		Key:         v.key,
		ServerTime:  info.ServerTime.UTC(),
		Stored:      info.Stored,
		InUse:       info.InUse,
		Waiters:     info.Waiters,
		DropDelayMs: info.DropDelay.Milliseconds(),
		LatencyUs:   info.Latency.Microseconds(),
		NoLoadMs:    info.NoLoadLatency.Milliseconds(),
		Holders:     []adaptiveHolderJSON{},
	}
	if info.Stored {
		out.Limit = &info.Limit
	}
	if v.min > 0 {
		out.Min = &v.min
	}
	if v.max > 0 {
		out.Max = &v.max
	}
	switch {
	case v.recorded:
		out.Bounds = "recorded"
	case v.min > 0 || v.max > 0:
		out.Bounds = "given"
	default:
		out.Bounds = "unknown"
	}
	if !info.LastDecrease.IsZero() {
		t := info.LastDecrease.UTC()
		out.LastDecrease = &t
	}
	if !info.LastIncrease.IsZero() {
		t := info.LastIncrease.UTC()
		out.LastIncrease = &t
	}
	for _, h := range info.Holders {
		out.Holders = append(out.Holders, adaptiveHolderJSON{
			ID:        h.ID,
			TTLMillis: h.ExpiresAt.Sub(info.ServerTime).Milliseconds(),
			ExpiresAt: h.ExpiresAt.UTC(),
		})
	}
	return out
}

// runAdaptiveShow prints the shared limit beside the slots in use, the
// waiters, when the limit last moved, and the holders with their time
// left, read at one moment by Limiter.Inspect, which writes nothing. A key
// that holds no adaptive limit is the answer no.
func runAdaptiveShow(c *cli, args []string) error {
	key := args[0]
	if err := c.checkBounds(); err != nil {
		return err
	}
	ctx, cancel := c.call()
	defer cancel()
	v, err := readAdaptive(ctx, c.client, key, c.adaptiveRead())
	if err != nil {
		return c.wrongType(err, adaptiveKind, key)
	}
	switch {
	case c.json:
		err = c.writeJSON(v.json())
	case !v.found():
		fmt.Fprintln(c.stderr, v.none())
	default:
		info := v.info
		t := newTable(c.stdout, "ADAPTIVE", display(key))
		t.row("limit", v.limit())
		t.row("in use", v.inUse())
		t.row("waiting", info.Waiters)
		t.row("last down", v.moved(info.LastDecrease, clockFormat))
		t.row("last up", v.moved(info.LastIncrease, clockFormat))
		if info.DropDelay > 0 {
			t.row("drop delay", info.DropDelay)
		}
		if info.Latency > 0 || info.NoLoadLatency > 0 {
			t.row("latency", info.Latency)
			t.row("no-load latency", info.NoLoadLatency)
		}
		t.row("server clock", info.ServerTime.UTC().Format(clockFormat))
		t.flush()
		if len(info.Holders) > 0 {
			fmt.Fprintln(c.stdout)
			t := newTable(c.stdout, "HOLDER", "TIME LEFT", "EXPIRES AT (SERVER CLOCK)")
			for _, h := range info.Holders {
				t.row(display(h.ID), left(h.ExpiresAt.Sub(info.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat))
			}
			t.flush()
		}
	}
	if err == nil && !v.found() {
		return errNo
	}
	return err
}

// An adaptiveWatcher reads the screens of adaptive watch, and keeps the
// limit and the slots in use of the last screens.
type adaptiveWatcher struct {
	c       *cli
	key     string
	l       *adaptive.Limiter
	bounds  adaptiveBounds // found before the first screen
	history []adaptiveView // the last screens read, oldest first, at most historyLen
}

type adaptiveWatchJSON struct {
	Screen int `json:"screen"`
	adaptiveJSON
}

// runAdaptiveWatch draws a screen every -interval until Ctrl-C, or -n
// screens, as watch does. A screen that finds no adaptive limit says so,
// and a Redis error is shown on the screen; the next screen reads again.
// The exit code is that of the last screen: 1 when it found no limit, 3
// when it failed.
func runAdaptiveWatch(c *cli, args []string) error {
	if err := c.checkLive(); err != nil {
		return err
	}
	if err := c.checkBounds(); err != nil {
		return err
	}
	w := &adaptiveWatcher{c: c, key: args[0]}
	ctx, cancel := c.call()
	var err error
	w.bounds, err = findBounds(ctx, c.client, w.key, c.adaptiveRead())
	cancel()
	if err != nil {
		return c.wrongType(err, adaptiveKind, w.key)
	}
	if w.l, err = newAdaptive(c.client, w.key, w.bounds); err != nil {
		return err
	}
	return c.live("slotlimit adaptive watch", w.key, func(ctx context.Context, n int) frame {
		v, err := inspectAdaptive(ctx, w.l, w.bounds)
		if err != nil {
			return c.failed(ctx, err, adaptiveKind, w.key)
		}
		f := frame{clock: v.info.ServerTime, json: adaptiveWatchJSON{Screen: n, adaptiveJSON: v.json()}}
		if !v.found() {
			f.body = func(p *page) {
				p.line("  %s", v.none())
				p.line("")
				p.line("(reading again every %v; Ctrl-C quits)", c.interval)
			}
			f.err = errNo
			return f
		}
		w.history = append(w.history, v)
		if len(w.history) > historyLen {
			w.history = w.history[1:]
		}
		f.body = func(p *page) { w.draw(p, v) }
		return f
	})
}

// draw draws the body of a screen that read v on p.
func (w *adaptiveWatcher) draw(p *page, v adaptiveView) {
	info := v.info
	p.line("  limit      %s", v.limit())
	if info.Stored {
		b, pct := bar(info.InUse, max(1, info.Limit))
		p.line("  in use     %d / %d slots   %s  %d%%", info.InUse, info.Limit, b, pct)
	} else {
		p.line("  in use     %s", plural(int(info.InUse), "slot"))
	}
	p.line("  waiting    %d", info.Waiters)
	p.line("  last down  %s", v.moved(info.LastDecrease, "15:04:05.000"))
	p.line("  last up    %s", v.moved(info.LastIncrease, "15:04:05.000"))
	p.line("")
	w.drawHistory(p)
	p.line("")
	p.line("  %-40s %11s", "HOLDER", "TIME LEFT")
	for i, h := range info.Holders {
		if i == w.c.rows {
			p.line("  … and %d more", len(info.Holders)-i)
			break
		}
		p.line("  %-40s %11s", clip(display(h.ID), 40), left(h.ExpiresAt.Sub(info.ServerTime)))
	}
	if len(info.Holders) == 0 {
		p.line("  (none)")
	}
	p.line("")
	p.line("Ctrl-C quits.")
}

// drawHistory draws the limit and the slots in use of the last screens,
// side by side, oldest first, as many as fit in 100 columns.
func (w *adaptiveWatcher) drawHistory(p *page) {
	width := 1
	for _, v := range w.history {
		width = max(width, len(strconv.FormatInt(v.info.Limit, 10)), len(strconv.FormatInt(v.info.InUse, 10)))
	}
	last := w.history[max(0, len(w.history)-(100-13)/(width+1)):]
	var limits, used strings.Builder
	for _, v := range last {
		if v.info.Stored {
			fmt.Fprintf(&limits, " %*d", width, v.info.Limit)
		} else {
			fmt.Fprintf(&limits, " %*s", width, "-")
		}
		fmt.Fprintf(&used, " %*d", width, v.info.InUse)
	}
	p.line("  the last %s, oldest first:", plural(len(last), "screen"))
	p.line("    limit  %s", limits.String())
	p.line("    in use %s", used.String())
}
