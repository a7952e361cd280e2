package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// clockFormat is how tables show a time on the server's clock, in UTC.
const clockFormat = "2006-01-02 15:04:05.000 MST"

// A table is a table for people: columns padded with spaces.
type table struct{ w *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	fmt.Fprintln(t.w, strings.Join(header, "\t"))
	return t
}

func (t *table) row(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(t.w, strings.Join(s, "\t"))
}

func (t *table) flush() { t.w.Flush() }

// writeJSON prints v as indented JSON.
func (c *cli) writeJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// display returns an ID as a table shows it: as it is when it is printable
// text without spaces, else quoted as a Go string, so that no ID can break
// a table or send a terminal escape.
func display(id string) string {
	if id == "" || strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' }) >= 0 {
		return strconv.Quote(id)
	}
	return id
}

// clip returns s cut to at most n runes, marking a cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// left formats the time left until a deadline: to a tenth of a second
// under ten minutes, to the second above; "lapsed" when none is left.
func left(d time.Duration) string {
	switch {
	case d <= 0:
		return "lapsed"
	case d < 10*time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// plural returns "1 holder", "2 holders".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
