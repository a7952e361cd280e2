package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// The plot's geometry, in px: one panel per variant, stacked.
const (
	plotWidth   = 900
	panelHeight = 200
	marginLeft  = 50
	marginRight = 20
	// marginQueue is the right margin of -queue's plot, for the latency's axis.
	marginQueue = 60
	marginTop   = 30
	panelGap    = 50
)

// plot writes the SVG plot of every run, if a path was given.
func (b *bench) plot(ctx context.Context) error {
	if b.svgPath == "" {
		return nil
	}
	return os.WriteFile(b.svgPath, []byte(b.svgPlot()), 0o644)
}

// svgPlot returns the plot: for each run, a panel of the capacity, the
// limit and the calls in flight over time.
func (b *bench) svgPlot() string {
	var top int64 = 10
	for _, r := range b.runs {
		for _, s := range r.samples {
			top = max(top, s.capacity, s.limit, s.calling)
		}
	}
	top = (top + 9) / 10 * 10
	total := time.Duration(len(b.capacities)) * b.phase
	height := marginTop + len(b.runs)*(panelHeight+panelGap)
	var w strings.Builder
	fmt.Fprintf(&w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := "Limit (blue) and calls in flight (orange) against the capacity (grey)"
	if b.queue {
		title = "Limit (blue), calls in flight (orange) and mean latency (red, right axis) against the capacity (grey)"
	}
	fmt.Fprintf(&w, `<text x="%d" y="18" font-size="14">%s, over %v</text>`+"\n", marginLeft, title, total)
	mr := marginRight
	if b.queue {
		mr = marginQueue
	}
	inner := float64(plotWidth - marginLeft - mr)
	for i, r := range b.runs {
		y0 := float64(marginTop + i*(panelHeight+panelGap) + 20)
		h := float64(panelHeight - 20)
		x := func(d time.Duration) float64 { return float64(marginLeft) + inner*d.Seconds()/total.Seconds() }
		y := func(v int64) float64 { return y0 + h - h*float64(v)/float64(top) }
		fmt.Fprintf(&w, `<text x="%d" y="%.0f" font-weight="bold">%s</text>`+"\n", marginLeft, y0-6, r.name)
		// Axes and grid.
		for v := int64(0); v <= top; v += 10 {
			fmt.Fprintf(&w, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", marginLeft, plotWidth-mr, y(v), y(v))
			fmt.Fprintf(&w, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", marginLeft-6, y(v)+4, v)
		}
		for s := time.Duration(0); s <= total; s += 2 * time.Second {
			fmt.Fprintf(&w, `<text x="%.1f" y="%.1f" text-anchor="middle">%ds</text>`+"\n", x(s), y0+h+16, int(s.Seconds()))
		}
		fmt.Fprintf(&w, `<rect x="%d" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", marginLeft, y0, inner, h)
		// The capacity, a step per phase.
		var cap []string
		for p, c := range b.capacities {
			from, to := time.Duration(p)*b.phase, time.Duration(p+1)*b.phase
			cap = append(cap, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(from), y(c), x(to), y(c)))
		}
		fmt.Fprintf(&w, `<polyline fill="none" stroke="#888" stroke-width="3" stroke-dasharray="6 3" points="%s"/>`+"\n", strings.Join(cap, " "))
		line := func(color string, width float64, value func(sample) int64) {
			pts := make([]string, len(r.samples))
			for j, s := range r.samples {
				pts[j] = fmt.Sprintf("%.1f,%.1f", x(s.at), y(value(s)))
			}
			fmt.Fprintf(&w, `<polyline fill="none" stroke="%s" stroke-width="%.1f" points="%s"/>`+"\n", color, width, strings.Join(pts, " "))
		}
		line("#f28e2b", 1, func(s sample) int64 { return s.calling })
		line("#1f77b4", 2, func(s sample) int64 { return s.limit })
		if b.queue {
			b.latencyLine(&w, r, x, y0, h)
		}
	}
	w.WriteString("</svg>\n")
	return w.String()
}

// latencyLine draws r's mean latency per sample on the panel at y0, of
// height h, against an axis of its own on the right, in ms from 0 to the
// caller's timeout's share the samples reach.
func (b *bench) latencyLine(w *strings.Builder, r run, x func(time.Duration) float64, y0, h float64) {
	top := 4 * b.callTime
	for _, run := range b.runs {
		for _, s := range run.samples {
			top = max(top, s.latency)
		}
	}
	step := b.callTime
	for top/step > 8 {
		step *= 2
	}
	top = (top + step - 1) / step * step
	y := func(d time.Duration) float64 { return y0 + h - h*float64(d)/float64(top) }
	right := float64(plotWidth - marginQueue)
	for d := time.Duration(0); d <= top; d += step {
		fmt.Fprintf(w, `<text x="%.0f" y="%.1f" fill="#d62728">%gms</text>`+"\n", right+4, y(d)+4, float64(d)/float64(time.Millisecond))
	}
	var pts []string
	for _, s := range r.samples {
		if s.latency > 0 {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.at), y(s.latency)))
		}
	}
	fmt.Fprintf(w, `<polyline fill="none" stroke="#d62728" stroke-width="1" points="%s"/>`+"\n", strings.Join(pts, " "))
}
