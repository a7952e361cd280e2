package main

import (
	"bytes"
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
	fs.IntVar(&c.n, "n", 0, "exit after `COUNT` screens; 0 runs until Ctrl-C")
	fs.DurationVar(&c.interval, "interval", time.Second, "the time between screens")
	fs.IntVar(&c.rows, "rows", 15, "the most holders listed")
}

// Terminal control: the cursor home, the rest of a line erased, and the
// rest of the screen erased. On a terminal, each screen is drawn over the
// last, line by line, so that it does not flicker. Elsewhere (a pipe, a
// file) watch writes none of them: each screen follows the last, after an
// empty line.
const (
	home      = "\x1b[H"
	eraseLine = "\x1b[K"
	eraseDown = "\x1b[J"
)

// barWidth is the width of the bar of units in use.
const barWidth = 40

// limitScan is how often, in screens, watch looks for the limit in Redis
// while it is unknown: slotlimit.Limits walks the node's keys. It looks
// also on each screen whose units in use are the most it has seen, since
// the limit is found while the key is full.
const limitScan = 5

// A watcher draws the screens of watch.
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
	n        int // 1 for the first
	snap     slotlimit.Snapshot
	refusals int64
	rate     float64 // refusals a second since the screen before
	hasRate  bool
	err      error
}

// runWatch draws a screen every -interval until Ctrl-C, or -n screens.
// A Redis error is shown on the screen, and the next screen tries again;
// watch exits with code 3 if the last screen failed.
func runWatch(c *cli, args []string) error {
	switch {
	case c.n < 0:
		return usageErrorf("-n %d: a count is at least 0", c.n)
	case c.interval < 10*time.Millisecond:
		return usageErrorf("-interval %v: at least 10ms", c.interval)
	case c.rows < 0:
		return usageErrorf("-rows %d: at least 0", c.rows)
	case c.limit < 0:
		return usageErrorf("-limit %d: a limit is at least 1", c.limit)
	}
	w := &watcher{c: c, key: args[0]}
	if c.limit > 0 {
		w.limit = limitInfo{limit: c.limit, given: true}
	}
	var err error
	if w.l, err = c.limiter(w.key, c.limit); err != nil {
		return err
	}
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
	for n := 1; ; n++ {
		s := w.read(ctx, n)
		switch {
		case c.json:
			w.writeJSON(s)
		case c.tty:
			fmt.Fprint(c.stdout, w.draw(s))
		default:
			if n > 1 {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprint(c.stdout, w.draw(s))
		}
		err = s.err
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

// read reads screen n: the snapshot, the limit while unknown, and the
// refusals.
func (w *watcher) read(ctx context.Context, n int) screen {
	ctx, cancel := context.WithTimeout(ctx, w.c.timeout)
	defer cancel()
	s := screen{n: n}
	if s.snap, s.err = w.l.Inspect(ctx); s.err != nil {
		return s
	}
	if !w.limit.given {
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

// draw returns screen s: on a terminal drawn over the one before, else
// as plain lines.
func (w *watcher) draw(s screen) string {
	var b bytes.Buffer
	tty := w.c.tty
	line := func(format string, args ...any) {
		l := fmt.Sprintf(format, args...)
		if tty {
			b.WriteString(l + eraseLine + "\n")
		} else {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	if tty {
		b.WriteString(home)
	}
	count := fmt.Sprintf("screen %d", s.n)
	if w.c.n > 0 {
		count += fmt.Sprintf(" of %d", w.c.n)
	}
	line("slotlimit watch  %s", display(w.key))
	clock := "-"
	if s.err == nil {
		clock = s.snap.ServerTime.UTC().Format("2006-01-02 15:04:05 MST")
	}
	line("redis %s   server clock %s   every %v   %s", w.c.addr, clock, w.c.interval, count)
	line("")
	if s.err != nil {
		line("error: %v", s.err)
		line("(trying again every %v; Ctrl-C quits)", w.c.interval)
		if tty {
			b.WriteString(eraseDown)
		}
		return b.String()
	}
	snap := s.snap
	if limit := w.limit.limit; limit > 0 {
		filled := int(min(barWidth, (snap.InUse*barWidth+limit-1)/limit))
		line("  in use     %d / %d units   [%s%s]  %d%%", snap.InUse, limit,
			strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), snap.InUse*100/limit)
	} else {
		line("  in use     %d units   (limit unknown: not yet seen full or waited on; give -limit)", snap.InUse)
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
	if tty {
		b.WriteString(eraseDown)
	}
	return b.String()
}

// watchJSON is one screen of watch -json: a line of JSON.
type watchJSON struct {
	Screen int `json:"screen"`
	*holdersJSON
	Refusals int64  `json:"refusals"`
	Error    string `json:"error,omitempty"`
}

func (w *watcher) writeJSON(s screen) {
	out := watchJSON{Screen: s.n}
	if s.err != nil {
		out.Error = s.err.Error()
	} else {
		h := newHoldersJSON(w.key, w.limit, s.snap)
		out.holdersJSON, out.Refusals = &h, s.refusals
	}
	line, _ := json.Marshal(out)
	fmt.Fprintf(w.c.stdout, "%s\n", line)
}
