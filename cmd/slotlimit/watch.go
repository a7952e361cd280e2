package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/slotlimit/slotlimit"
)

func watchFlags(fs *flag.FlagSet, c *cli) {
	limitFlag(fs, c)
	liveFlags(fs, c)
}

// liveFlags defines the flags of a live view: watch and adaptive watch.
func liveFlags(fs *flag.FlagSet, c *cli) {
	fs.IntVar(&c.n, "n", 0, "exit after `COUNT` screens; 0 runs until Ctrl-C")
	fs.DurationVar(&c.interval, "interval", time.Second, "the time between screens")
	fs.IntVar(&c.rows, "rows", 15, "the most holders listed")
}

// checkLive returns the usage error of a bad -n, -interval or -rows.
func (c *cli) checkLive() error {
	switch {
	case c.n < 0:
		return usageErrorf("-n %d: a count is at least 0", c.n)
	case c.interval < 10*time.Millisecond:
		return usageErrorf("-interval %v: at least 10ms", c.interval)
	case c.rows < 0:
		return usageErrorf("-rows %d: at least 0", c.rows)
	}
	return nil
}

// Terminal control: the cursor home, the rest of a line erased, and the
// rest of the screen erased. On a terminal, each screen is drawn over the
// last, line by line, so that it does not flicker. Elsewhere (a pipe, a
// file) a live view writes none of them: each screen follows the last,
// after an empty line.
const (
	home      = "\x1b[H"
	eraseLine = "\x1b[K"
	eraseDown = "\x1b[J"
)

// barWidth is the width of the bar of units in use.
const barWidth = 40

// limitScan is how often, in screens, watch looks for the limit in the
// full markers while no limit is recorded (a key last used by a release
// that kept none): slotlimit.Limits then walks the node's keys. It looks
// also on each screen whose units in use are the most it has seen, since
// the limit is found while the key is full.
const limitScan = 5

// A page is one screen of a live view, built line by line. On a terminal
// it is drawn over the screen before: it begins at the cursor home, each
// line erases the rest of its row, and its end erases the rows below.
// Elsewhere it is plain lines, without trailing spaces.
type page struct {
	b   bytes.Buffer
	tty bool
}

func newPage(tty bool) *page {
	p := &page{tty: tty}
	if tty {
		p.b.WriteString(home)
	}
	return p
}

// line adds a line.
func (p *page) line(format string, args ...any) {
	l := fmt.Sprintf(format, args...)
	if p.tty {
		p.b.WriteString(l + eraseLine + "\n")
	} else {
		p.b.WriteString(strings.TrimRight(l, " ") + "\n")
	}
}

// String returns the page, ended.
func (p *page) String() string {
	if p.tty {
		p.b.WriteString(eraseDown)
	}
	return p.b.String()
}

// bar returns a bar of n against limit, "[####....]", and the percentage.
func bar(n, limit int64) (string, int64) {
	filled := int(min(barWidth, (n*barWidth+limit-1)/limit))
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled) + "]", n * 100 / limit
}

// A frame is one screen of a live view, as read.
type frame struct {
	clock time.Time   // the server's clock when it was read
	body  func(*page) // draws the screen below its header; nil when the read failed
	json  any         // the screen's line of -json; with no body, live writes the error's
	err   error       // the outcome should it be the last screen: nil, errNo, or the read's error, which the screen shows
	words string      // with no body, why the key holds no such primitive, shown instead of the error (see failed)
}

// failed returns the frame of a screen whose read of the primitive of
// kind at key failed with err. A key that holds a value of another type
// than kind keeps there is explained in words, as the commands explain it
// (cli.typeWords), on the screen: the answer no, exit code 1 should it be
// the last screen. Any other error is shown as it is (exit code 3). The
// next screen reads again, either way.
func (c *cli) failed(ctx context.Context, err error, kind, key string) frame {
	if words, ok := c.typeWords(ctx, err, kind, key); ok {
		return frame{err: errNo, words: words}
	}
	return frame{err: err}
}

// live is the loop of a live view, watch's and adaptive watch's: it reads
// a frame, with read, and shows it, every -interval until Ctrl-C, or -n
// frames. title and key head each screen. On a terminal each screen is
// drawn over the last; elsewhere each follows the last after an empty
// line, with no terminal codes; with -json each is a line of JSON. A
// frame whose read failed shows the error, and the next tries again. live
// returns the outcome of the last frame: interrupted, nil.
func (c *cli) live(title, key string, read func(ctx context.Context, n int) frame) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	// On a terminal, the cursor is left below the last screen.
	end := func() {
		if !c.json && c.tty {
			fmt.Fprintln(c.stdout)
		}
	}
	var err error
	for n := 1; ; n++ {
		f := c.readFrame(ctx, n, read)
		switch {
		case c.json:
			js := f.json
			if f.body == nil {
				js = errorJSON{Screen: n, Error: cmp.Or(f.words, f.err.Error())}
			}
			line, _ := json.Marshal(js)
			fmt.Fprintf(c.stdout, "%s\n", line)
		case c.tty:
			fmt.Fprint(c.stdout, c.drawFrame(title, key, n, f))
		default:
			if n > 1 {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprint(c.stdout, c.drawFrame(title, key, n, f))
		}
		err = f.err
		if c.n > 0 && n >= c.n {
			break
		}
		select {
		case <-ctx.Done():
			end()
			return nil
		case <-tick.C:
		}
	}
	end()
	return err
}

// readFrame reads frame n, within -timeout.
func (c *cli) readFrame(ctx context.Context, n int, read func(ctx context.Context, n int) frame) frame {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return read(ctx, n)
}

// errorJSON is the line of -json of a screen whose read failed.
type errorJSON struct {
	Screen int    `json:"screen"`
	Error  string `json:"error"`
}

// drawFrame returns screen n: its header, then its body or its error.
func (c *cli) drawFrame(title, key string, n int, f frame) string {
	p := newPage(c.tty)
	count := fmt.Sprintf("screen %d", n)
	if c.n > 0 {
		count += fmt.Sprintf(" of %d", c.n)
	}
	p.line("%s  %s", title, display(key))
	clock := "-"
	if f.body != nil {
		clock = f.clock.UTC().Format("2006-01-02 15:04:05 MST")
	}
	p.line("redis %s   server clock %s   every %v   %s", c.addr, clock, c.interval, count)
	p.line("")
	switch {
	case f.words != "":
		p.line("  %s", f.words)
		p.line("")
		p.line("(reading again every %v; Ctrl-C quits)", c.interval)
	case f.body == nil:
		p.line("error: %v", f.err)
		p.line("(trying again every %v; Ctrl-C quits)", c.interval)
	default:
		f.body(p)
	}
	return p.String()
}

// A watcher reads the screens of watch.
type watcher struct {
	c     *cli
	key   string
	l     *slotlimit.Limiter
	limit limitInfo // the highest seen, or -limit; it stays once found
	peak  int64     // the most units in use on a screen so far

	// The refusals of the screen before, on the server's clock.
	refusals   int64
	refusalsAt time.Time
}

// A screen is what one refresh read.
type screen struct {
	n        int  // 1 for the first
	none     bool // no live lease, no queue and no limit recorded: no limiter
	snap     slotlimit.Snapshot
	refusals int64
	rate     float64 // refusals a second since the screen before
	hasRate  bool
	err      error
}

// runWatch draws a screen every -interval until Ctrl-C, or -n screens.
// A Redis error is shown on the screen, and the next screen tries again;
// watch exits with code 3 if the last screen failed, and 1 if it found no
// limiter, or a key of another type, which it explains (cli.failed).
func runWatch(c *cli, args []string) error {
	if err := c.checkLive(); err != nil {
		return err
	}
	if c.limit < 0 {
		return usageErrorf("-limit %d: a limit is at least 1", c.limit)
	}
	w := &watcher{c: c, key: args[0]}
	if c.limit > 0 {
		w.limit = limitInfo{limit: c.limit, given: true}
	}
	var err error
	if w.l, err = newLimiter(c.client, w.key, c.limit); err != nil {
		return err
	}
	return c.live("slotlimit watch", w.key, func(ctx context.Context, n int) frame {
		s := w.read(ctx, n)
		if s.err != nil {
			return c.failed(ctx, s.err, kindLimiter, w.key)
		}
		f := frame{
			clock: s.snap.ServerTime,
			body:  func(p *page) { w.draw(p, s) },
			json:  w.json(s),
		}
		if s.none {
			f.err = errNo
		}
		return f
	})
}

// read reads screen n: the snapshot, the limit while unknown, and the
// refusals.
func (w *watcher) read(ctx context.Context, n int) screen {
	s := screen{n: n}
	if s.snap, s.err = w.l.Inspect(ctx); s.err != nil {
		return s
	}
	rec, recorded, err := slotlimit.Recorded(ctx, w.c.client, w.key)
	if s.err = err; err != nil {
		return s
	}
	recorded = recorded && rec.TTL > 0 // a Counter's is not a limiter's
	s.none = !recorded && len(s.snap.Holders) == 0 && len(s.snap.Queue) == 0
	if !w.limit.given && recorded {
		w.limit.limit = rec.Limit
	}
	if !w.limit.given && !recorded {
		for _, q := range s.snap.Queue {
			w.limit.limit = max(w.limit.limit, q.Limit)
		}
		peak := s.snap.InUse > w.peak
		w.peak = max(w.peak, s.snap.InUse)
		if w.limit.limit == 0 && (n%limitScan == 1 || peak) {
			found, err := slotlimit.Limits(ctx, w.c.client, w.key)
			if err != nil {
				s.err = err
				return s
			}
			if len(found) > 0 {
				w.limit.limit = found[len(found)-1]
			}
		}
	}
	if s.refusals, s.err = refusals(ctx, w.l); s.err != nil {
		return s
	}
	if at := s.snap.ServerTime; !w.refusalsAt.IsZero() && s.refusals >= w.refusals && at.After(w.refusalsAt) {
		s.rate, s.hasRate = float64(s.refusals-w.refusals)/at.Sub(w.refusalsAt).Seconds(), true
	}
	w.refusals, w.refusalsAt = s.refusals, s.snap.ServerTime
	return s
}

// refusals returns the refusals counted on l's key, by the Limiters on it
// that count them (slotlimit.Config.CountRefusals).
func refusals(ctx context.Context, l *slotlimit.Limiter) (int64, error) {
	return l.Refusals(ctx)
}

// draw draws the body of screen s on p.
func (w *watcher) draw(p *page, s screen) {
	line := p.line
	snap := s.snap
	if s.none {
		line("  no limiter at %s: no lease, no queue, no limit recorded", display(w.key))
		line("")
		line("(reading again every %v; Ctrl-C quits)", w.c.interval)
		return
	}
	if limit := w.limit.limit; limit > 0 {
		b, pct := bar(snap.InUse, limit)
		line("  in use     %d / %d units   %s  %d%%", snap.InUse, limit, b, pct)
	} else {
		line("  in use     %d units   (limit unknown: none recorded, not yet seen full or waited on; give -limit)", snap.InUse)
	}
	line("  holders    %d", len(snap.Holders))
	waiting := fmt.Sprintf("  queue      %d waiting", len(snap.Queue))
	for i, q := range snap.Queue {
		if i == 0 {
			waiting += ":"
		} else {
			waiting += ","
		}
		waiting += fmt.Sprintf(" %s (%s)", display(q.ID), plural(int(q.Units), "unit"))
	}
	line("%s", clip(waiting, 99))
	rate := ""
	if s.hasRate {
		rate = fmt.Sprintf(", %+.1f/s", s.rate)
	}
	line("  refusals   %d%s ¹", s.refusals, rate)
	line("")
	line("  %-40s %5s %11s", "HOLDER", "UNITS", "TIME LEFT")
	for i, h := range snap.Holders {
		if i == w.c.rows {
			line("  … and %d more", len(snap.Holders)-i)
			break
		}
		line("  %-40s %5d %11s", clip(display(h.ID), 40), h.Weight, left(h.ExpiresAt.Sub(snap.ServerTime)))
	}
	if len(snap.Holders) == 0 {
		line("  (none)")
	}
	line("")
	line("¹ calls refused without waiting, as counted in Redis over a day by the Limiters with")
	line("  Config.CountRefusals set; Limiters without it count none. Ctrl-C quits.")
}

// watchJSON is one screen of watch -json: a line of JSON.
type watchJSON struct {
	Screen int `json:"screen"`
	*holdersJSON
	Refusals int64 `json:"refusals"`
}

// json returns screen s as a line of watch -json.
func (w *watcher) json(s screen) watchJSON {
	h := newHoldersJSON(w.key, w.limit, s.snap)
	return watchJSON{Screen: s.n, holdersJSON: &h, Refusals: s.refusals}
}
