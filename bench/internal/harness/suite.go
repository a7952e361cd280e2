package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"
)

// A Suite is one package's benchmark: its scenarios and the report of
// their figures.
type Suite interface {
	// Steps returns the scenarios to run on env, in order. Each keeps
	// its figures in the suite for Report.
	Steps(env *Env) []Step
	// Report adds the suite's title, notes and tables to r, which holds
	// the header's command, machine and server already.
	Report(r *Report)
}

// A Step is one scenario of a Suite.
type Step struct {
	Name string // shown in the progress lines, as "contention, Acquire"
	Run  func(ctx context.Context) error
}

// Main is a benchmark command's main function. name is its directory
// under bench/cmd, as "costbench". It defines the shared flags (see
// Options) beside any the caller defined on flag.CommandLine, parses
// them, runs s (see Run), prints the report, writes it to -o if given,
// and exits non-zero on an error.
func Main(name string, s Suite) {
	log.SetFlags(0)
	log.SetPrefix(name + ": ")
	o := DefaultOptions()
	o.RegisterFlags(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := o.Check(); err != nil {
		log.Fatal(err)
	}
	report, err := Run(context.Background(), name, o, s, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(report)
	if o.Out != "" {
		if err := os.WriteFile(o.Out, report, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// Run runs s's steps in order against the server o names, or one it
// starts and stops, writing a progress line per step to progress, and
// returns the report as markdown. It deletes the run's keys when done.
func Run(ctx context.Context, name string, o Options, s Suite, progress io.Writer) (report []byte, err error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	srv, err := StartServer(o.Addr)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	r := &Report{Source: "bench/cmd/" + name, Command: CommandLine(name), Server: "at " + srv.Addr}
	if srv.Started() {
		r.Server = "started by " + name + " on " + srv.Addr
	}

	env := NewEnv(name, srv.Addr, o)
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, env.Close(cleanup))
	}()
	if r.Machine, err = DescribeMachine(ctx, env.Admin); err != nil {
		return nil, err
	}
	for _, step := range s.Steps(env) {
		start := time.Now()
		fmt.Fprintf(progress, "%s: %s ...", name, step.Name)
		err := step.Run(ctx)
		fmt.Fprintf(progress, " %.1fs\n", time.Since(start).Seconds())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", step.Name, err)
		}
	}
	s.Report(r)
	return r.Markdown(), nil
}

// CommandLine returns how the command name was run, from bench/, naming
// `go run` for a binary that go run built.
func CommandLine(name string) string {
	prog := os.Args[0]
	if strings.Contains(prog, "go-build") {
		prog = "cd bench && go run ./cmd/" + name
	}
	return strings.Join(append([]string{prog}, os.Args[1:]...), " ")
}
