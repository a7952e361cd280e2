// Instrcount counts the instructions Redis runs inside EVALSHA for one
// pair of calls, which unlike the server's time does not move with the
// machine's load: the Limiter's TryAcquire of a new lease and its
// Release, through the library with the default Config (one caller, so
// each script call is a batch of one), the same with
// Config.DisableCoalescing, the minimal ZSET lease script pair, and the
// classic INCR/DECR limiter scripts; and the Limiter's ratios to the last
// two. It prints a markdown table.
//
// It starts one redis-server on a free loopback port under
// valgrind --tool=callgrind (valgrind, callgrind_control,
// callgrind_annotate and redis-server must be on PATH), with no
// persistence, and stops it when done. For each variant in turn, one
// caller runs -warmup pairs (50), then callgrind_control --zero clears
// the counts, the caller runs -pairs serial pairs (500), and
// callgrind_control --dump writes them. A pair's figure is the inclusive
// count of -func (evalShaCommand, Redis's EVALSHA command), as
// callgrind_annotate --inclusive=yes reports it, divided by the pairs;
// INFO commandstats checks that the variant's client sent EVALSHA alone,
// twice a pair. From bench/:
//
//	go run ./cmd/instrcount
//
// -keep names a directory in which to keep callgrind's files, one dump a
// variant, for callgrind_annotate. Its tests check how it reads
// callgrind_annotate; go test never runs it, nor valgrind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/bench/internal/baseline"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/internal/classic"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// settings are instrcount's flags.
type settings struct {
	pairs  int    // measured pairs of each variant
	warmup int    // pairs of each variant before its measure
	fn     string // Redis's function of the EVALSHA command
	keep   string // directory for callgrind's files; empty: a temporary one
	out    string // also write the report to this file
}

// limit is the Limit of the Limiter and of the lease scripts: serial
// pairs never hold more than one slot.
const limit = 60

func main() {
	log.SetFlags(0)
	log.SetPrefix("instrcount: ")
	s := settings{pairs: 500, warmup: 50, fn: "evalShaCommand"}
	flag.IntVar(&s.pairs, "pairs", s.pairs, "serial pairs measured of each variant")
	flag.IntVar(&s.warmup, "warmup", s.warmup, "pairs of each variant run before it is measured")
	flag.StringVar(&s.fn, "func", s.fn, "Redis's `function` of the EVALSHA command, whose inclusive count is measured")
	flag.StringVar(&s.keep, "keep", s.keep, "keep callgrind's files in `dir`")
	flag.StringVar(&s.out, "o", s.out, "also write the report to `file`")
	flag.Parse()
	if flag.NArg() > 0 || s.pairs < 1 || s.warmup < 1 {
		flag.Usage()
		os.Exit(2)
	}
	report, err := run(context.Background(), s, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(report)
	if s.out != "" {
		if err := os.WriteFile(s.out, report, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// A variant is one pair of calls, made by pair for the pair numbered i.
type variant struct {
	name string
	pair func(ctx context.Context, i int) error
}

// A count is a variant's figure: its instructions inside s.fn over its
// pairs, and its EVALSHA calls.
type count struct {
	name           string
	instr, evalsha int64
}

func run(ctx context.Context, s settings, progress io.Writer) (report []byte, err error) {
	for _, tool := range []string{"valgrind", "callgrind_control", "callgrind_annotate"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not on PATH", tool)
		}
	}
	dir := s.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "instrcount-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cg := callgrind{out: filepath.Join(dir, "callgrind.out")}
	srv, err := redistest.StartUnder([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg.out})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	env := harness.NewEnv("instrcount", srv.Addr, harness.Options{Pool: 1})
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, env.Close(cleanup))
	}()
	if cg.pid, err = serverPid(ctx, env); err != nil {
		return nil, err
	}
	r := &harness.Report{
		Title:   "Instructions inside EVALSHA per pair",
		Source:  "bench/cmd/instrcount",
		Command: harness.CommandLine("instrcount"),
		Server:  "started by instrcount under valgrind --tool=callgrind on " + srv.Addr,
	}
	if r.Machine, err = harness.DescribeMachine(ctx, env.Admin); err != nil {
		return nil, err
	}
	if v, err := exec.Command("valgrind", "--version").Output(); err == nil {
		r.Notes = append(r.Notes, "Valgrind: "+strings.TrimSpace(string(v))+".")
	}

	vs, err := variants(ctx, env)
	if err != nil {
		return nil, err
	}
	var counts []count
	for _, v := range vs {
		start := time.Now()
		fmt.Fprintf(progress, "instrcount: %s ...", v.name)
		c, err := measure(ctx, env, cg, s, v)
		fmt.Fprintf(progress, " %.1fs\n", time.Since(start).Seconds())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		counts = append(counts, c)
	}
	r.Add(table(s, counts))
	return r.Markdown(), nil
}

// variants returns the pairs to count: the Limiter's, with coalescing and
// without, then the two baselines, whose scripts it loads.
func variants(ctx context.Context, env *harness.Env) ([]variant, error) {
	c := env.Client
	holder := func(i int) string { return fmt.Sprintf("holder-%06d", i) }
	limiter := func(key string, alone bool) (func(ctx context.Context, i int) error, error) {
		l, err := slotlimit.New(c, slotlimit.Config{Key: env.Key(key), Limit: limit, DisableCoalescing: alone})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, i int) error {
			res, err := l.TryAcquire(ctx, holder(i))
			if err == nil && !res.Acquired {
				err = fmt.Errorf("TryAcquire refused %s: %d of %d held", holder(i), res.Count, res.Limit)
			}
			if err != nil {
				return err
			}
			return l.Release(ctx, holder(i))
		}, nil
	}
	coalesced, err := limiter("limiter", false)
	if err != nil {
		return nil, err
	}
	alone, err := limiter("limiter-alone", true)
	if err != nil {
		return nil, err
	}
	acquire, release := harness.NewScript(baseline.LeaseAcquire), harness.NewScript(baseline.LeaseRelease)
	incr, decr := harness.NewScript(classic.Incr), harness.NewScript(classic.Decr)
	for _, sc := range []harness.Script{acquire, release, incr, decr} {
		if err := sc.Load(ctx, env.Admin); err != nil {
			return nil, err
		}
	}
	leaseKey := []string{env.Key("lease")}
	ttl := strconv.FormatInt(slotlimit.DefaultTTL.Milliseconds(), 10)
	counter := []string{env.Key("counter")}
	return []variant{
		{nameLimiter, coalesced},
		{nameAlone, alone},
		{nameLease, func(ctx context.Context, i int) error {
			now := strconv.FormatInt(time.Now().UnixMilli(), 10)
			if n, err := c.EvalSha(ctx, acquire.SHA, leaseKey, now, ttl, limit, holder(i)).Int64(); err != nil || n != 1 {
				return fmt.Errorf("lease script: %d, %v", n, err)
			}
			if n, err := c.EvalSha(ctx, release.SHA, leaseKey, holder(i)).Int64(); err != nil || n != 1 {
				return fmt.Errorf("lease release script: %d, %v", n, err)
			}
			return nil
		}},
		{nameClassic, func(ctx context.Context, i int) error {
			if n, err := c.EvalSha(ctx, incr.SHA, counter, limit).Int64(); err != nil || n != 1 {
				return fmt.Errorf("classic acquire script: %d, %v", n, err)
			}
			if n, err := c.EvalSha(ctx, decr.SHA, counter).Int64(); err != nil || n != 0 {
				return fmt.Errorf("classic release script: %d, %v", n, err)
			}
			return nil
		}},
	}, nil
}

const (
	nameLimiter = "Limiter TryAcquire + Release"
	nameAlone   = "the same, Config.DisableCoalescing"
	nameLease   = "minimal ZSET lease pair"
	nameClassic = "classic INCR/DECR limiter scripts"
)

// measure runs v's warm-up, then its measured pairs between a zero and a
// dump of callgrind's counts, and returns its count.
func measure(ctx context.Context, env *harness.Env, cg callgrind, s settings, v variant) (count, error) {
	for i := range s.warmup {
		if err := v.pair(ctx, i); err != nil {
			return count{}, err
		}
	}
	if err := cg.control("--zero"); err != nil {
		return count{}, err
	}
	ph, err := env.Measure(ctx, func() (int64, error) {
		for i := range s.pairs {
			if err := v.pair(ctx, s.warmup+i); err != nil {
				return int64(i), err
			}
		}
		return int64(s.pairs), nil
	})
	if err != nil {
		return count{}, err
	}
	if err := ph.CheckCommands([]string{"evalsha"}); err != nil {
		return count{}, err
	}
	calls := ph.Server["evalsha"].Calls
	if calls != 2*int64(s.pairs) {
		return count{}, fmt.Errorf("the server ran EVALSHA %d times for %d pairs", calls, s.pairs)
	}
	file, err := cg.dump()
	if err != nil {
		return count{}, err
	}
	out, err := exec.CommandContext(ctx, "callgrind_annotate", "--inclusive=yes", "--threshold=100", file).Output()
	if err != nil {
		return count{}, fmt.Errorf("callgrind_annotate %s: %w", file, err)
	}
	instr, err := inclusive(string(out), s.fn)
	if err != nil {
		return count{}, fmt.Errorf("%s: %w", file, err)
	}
	return count{name: v.name, instr: instr, evalsha: calls}, nil
}

// table returns the report's table: each variant's instructions per pair
// inside s.fn, and the Limiter's ratios to the two baselines.
func table(s settings, counts []count) harness.Table {
	per := map[string]float64{}
	for _, c := range counts {
		per[c.name] = float64(c.instr) / float64(s.pairs)
	}
	t := harness.Table{
		Title: "Instructions per pair",
		Intro: fmt.Sprintf("Each variant's pairs, %d serial pairs from one caller after %d to warm up, each TryAcquire a holder's new lease; "+
			"the Limiter's Config is the default with Limit %d. Instructions are the inclusive count of %s, callgrind's counts zeroed before "+
			"each variant's pairs and dumped after them, one server for all.", s.pairs, s.warmup, limit, "`"+s.fn+"`"),
		Head: []string{"pair", "EVALSHA per pair", "instructions per pair", "÷ " + nameLease, "÷ " + nameClassic},
	}
	for _, c := range counts {
		ratio := func(base string) string {
			if c.name == base {
				return "—"
			}
			return harness.Times(harness.Div(per[c.name], per[base]))
		}
		t.Add(c.name, fmt.Sprintf("%.0f", float64(c.evalsha)/float64(s.pairs)), harness.Count(per[c.name]), ratio(nameLease), ratio(nameClassic))
	}
	return t
}

// serverPid returns the process ID of env's server: valgrind's, since the
// server runs inside it.
func serverPid(ctx context.Context, env *harness.Env) (int, error) {
	info, err := env.Admin.Info(ctx, "server").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("no process_id in INFO server")
}

// callgrind is the running callgrind: its process and the file its dumps
// are named after (out.1, out.2, …).
type callgrind struct {
	pid int
	out string
}

// control runs callgrind_control with arg on the server.
func (cg callgrind) control(arg string) error {
	out, err := exec.Command("callgrind_control", arg, strconv.Itoa(cg.pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("callgrind_control %s: %w: %s", arg, err, out)
	}
	return nil
}

// dump writes callgrind's counts since the last zero to a new file, and
// returns its name.
func (cg callgrind) dump() (string, error) {
	before, err := filepath.Glob(cg.out + ".*")
	if err != nil {
		return "", err
	}
	if err := cg.control("--dump"); err != nil {
		return "", err
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		after, _ := filepath.Glob(cg.out + ".*")
		for _, f := range after {
			if !slices.Contains(before, f) {
				if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
					return f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("callgrind wrote no dump beside %s", cg.out)
}

// inclusive returns the inclusive count of function fn in the output of
// callgrind_annotate --inclusive=yes, whose lines read
// "92,753 (21.01%)  ???:evalShaCommand [/usr/bin/redis-server]".
func inclusive(annotated, fn string) (int64, error) {
	var found []int64
	for _, line := range strings.Split(annotated, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		_, name, ok := strings.Cut(fields[2], ":")
		if !ok || name != fn {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(fields[0], ",", ""), 10, 64)
		if err != nil {
			continue
		}
		found = append(found, n)
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("callgrind_annotate names no function %s", fn)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("callgrind_annotate names %s %d times", fn, len(found))
}
