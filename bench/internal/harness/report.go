package harness

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// A Report is a run's markdown report: a header that says how it was
// produced and where it ran, then tables in order.
type Report struct {
	Title   string   // the top heading
	Source  string   // the command's package, as "bench/cmd/costbench"
	Command string   // the command line that produced it
	Machine Machine  // where it ran
	Server  string   // the Redis it loaded, as "started by costbench on 127.0.0.1:6379"
	Notes   []string // lines of the header's list after the machine's
	Tables  []Table
}

// Add appends tables to the report.
func (r *Report) Add(tables ...Table) {
	r.Tables = append(r.Tables, tables...)
}

// Markdown returns the report as markdown.
func (r *Report) Markdown() []byte {
	var b bytes.Buffer
	r.Write(&b)
	return b.Bytes()
}

// Write writes the report to w as markdown.
func (r *Report) Write(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "# %s\n\n", r.Title)
	fmt.Fprintf(w, "Produced by `%s`, run as:\n\n    %s\n\n", r.Source, r.Command)
	fmt.Fprintf(w, "- Machine: %d CPUs (nproc), %s; %s; Redis %s, %s.\n", m.CPUs, m.Model, m.Go, m.Redis, r.Server)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	fmt.Fprintln(w)
	for _, t := range r.Tables {
		t.Write(w)
	}
}

// A Table is a markdown table under a heading, with a paragraph that says
// what it measured and how, and one after it that may say what it shows.
type Table struct {
	Title string // the heading, without "## "
	Intro string // the paragraph before the table; may be empty
	Head  []string
	Rows  [][]string
	Outro string // the paragraph after the table; may be empty
}

// Add appends a row.
func (t *Table) Add(cells ...string) {
	t.Rows = append(t.Rows, cells)
}

// Write writes the table to w as markdown.
func (t *Table) Write(w io.Writer) {
	fmt.Fprintf(w, "## %s\n\n", t.Title)
	if t.Intro != "" {
		fmt.Fprintf(w, "%s\n\n", t.Intro)
	}
	line := func(cells []string) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	line(t.Head)
	sep := make([]string, len(t.Head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range t.Rows {
		line(r)
	}
	fmt.Fprintln(w)
	if t.Outro != "" {
		fmt.Fprintf(w, "%s\n\n", t.Outro)
	}
}

// A Target is one figure a run is held to: what was measured, the target,
// the ratio the target is about, and whether the run met it.
type Target struct {
	Name     string // what is compared, as "pairs/s / raw INCR+DECR pairs/s, 64 callers"
	Measured string // the figures, as "23,751 vs 36,149 pairs/s"
	Target   string // as "≥ 0.80×"
	Ratio    string // as "0.66×"
	Pass     bool
}

// Result returns "PASS", or "**FAIL**" in bold.
func (t Target) Result() string {
	if t.Pass {
		return "PASS"
	}
	return "**FAIL**"
}

// TargetHead is the head of a table of targets.
var TargetHead = []string{"figure", "measured", "target", "ratio", "result"}

// TargetTable returns a table of targets, one row each, in the columns of
// TargetHead.
func TargetTable(title, intro string, targets []Target) Table {
	t := Table{Title: title, Intro: intro, Head: TargetHead}
	for _, x := range targets {
		t.Add(x.Name, x.Measured, x.Target, x.Ratio, x.Result())
	}
	return t
}
