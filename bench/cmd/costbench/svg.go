package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// A panel's geometry, in px; a plot is two panels side by side.
const (
	panelW, panelH = 420, 260
	padL, padR     = 70, 20
	padT, padB     = 40, 50
	legendH        = 18
)

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"}

// writePlots writes limiter.svg and grab.svg to the plots' directory, if
// there is one.
func (b *bench) writePlots(context.Context) error {
	dir := b.plotDir()
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, rs := range map[string][][]result{"limiter": b.limiter, "grab": b.grab} {
		unit := map[string]string{"limiter": "pairs/s", "grab": "grabs/s"}[name]
		if err := os.WriteFile(filepath.Join(dir, name+".svg"), []byte(plot(name, unit, rs)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// plot returns an SVG of two panels, operations per second and p50 per
// call against the callers, one line per variant of rs (by callers, then
// variant).
func plot(title, unit string, rs [][]result) string {
	var s strings.Builder
	n := 0
	if len(rs) > 0 {
		n = len(rs[0])
	}
	height := padT + panelH + padB + legendH*n + 10
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", 2*panelW, height)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	panel(&s, 0, title+": "+unit, rs, rate, 1)
	panel(&s, panelW, title+": p50 per call (ms)", rs, p50, 1e-3)
	for v := range n {
		y := padT + panelH + padB + legendH*v
		fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", padL, y, padL+24, y, colors[v%len(colors)])
		fmt.Fprintf(&s, `<text x="%d" y="%d">%s</text>`+"\n", padL+30, y+4, esc(rs[0][v].name))
	}
	s.WriteString("</svg>\n")
	return s.String()
}

// panel draws one panel at x0: m of each variant, times scale, against
// the callers, the callers evenly spaced, the y axis from 0.
func panel(s *strings.Builder, x0 int, title string, rs [][]result, m metric, scale float64) {
	if len(rs) == 0 {
		return
	}
	top := 0.0
	for _, c := range rs {
		for _, r := range c {
			top = max(top, scale*m.value(r.all()))
		}
	}
	step := niceStep(top / 4)
	top = math.Max(step*math.Ceil(top/step), step)
	w, h := panelW-padL-padR, panelH
	x := func(c int) float64 { return float64(x0+padL) + float64(w)*(float64(c)+0.5)/float64(max(len(rs), 1)) }
	y := func(v float64) float64 { return float64(padT+h) - float64(h)*v/top }
	fmt.Fprintf(s, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", x0+padL, padT-15, esc(title))
	fmt.Fprintf(s, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", x0+padL, padT, w, h)
	for i := 0.0; i*step <= top+step/2; i++ {
		v := i * step
		fmt.Fprintf(s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0+padL, y(v), x0+padL+w, y(v), x0+padL-5, y(v)+4, shortCount(v))
	}
	for c := range rs {
		if len(rs[c]) > 0 {
			fmt.Fprintf(s, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(c), padT+h+16, rs[c][0].callers)
		}
	}
	fmt.Fprintf(s, `<text x="%d" y="%d" text-anchor="middle">callers on one key</text>`+"\n", x0+padL+w/2, padT+h+34)
	for v := range rs[0] {
		var pts []string
		for c := range rs {
			px, py := x(c), y(scale*m.value(rs[c][v].all()))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
			fmt.Fprintf(s, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px, py, colors[v%len(colors)])
		}
		fmt.Fprintf(s, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colors[v%len(colors)])
	}
}

// niceStep returns 1, 2 or 5 times a power of ten, at least x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// shortCount formats an axis label: 20k for 20,000.
func shortCount(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%gk", v/1000)
	}
	return fmt.Sprintf("%g", v)
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
