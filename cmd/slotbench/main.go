// Slotbench measures the slotlimit library against a real Redis, beside
// bare go-redis baselines in the same run, and prints a markdown table of
// the figures and of the performance budgets they are held to.
//
// It runs, in one process on one pool of connections:
//
//   - no contention: TryAcquire+Release pairs of distinct holders on one
//     key, against (a) INCR+DECR, (b) the library's own acquire and release
//     scripts by bare EVALSHA and (c) the seed's two counter scripts;
//   - the Redis time of each script (INFO commandstats usec_per_call), each
//     script alone in its phase, including a full key whose tries are all
//     refused;
//   - contention: limit 60, -contenders workers (200) holding each slot
//     for -hold, by polling TryAcquire and by Acquire;
//   - many keys: one TryAcquire+Release on each of -keys area codes;
//   - MEMORY USAGE of a key with 60 holders, and of an idle key;
//   - a burst of 100 holders by TryAcquireBatch/ReleaseBatch against 100
//     single calls;
//   - allocations per call, against the go-redis calls underneath.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH. Baseline (b) replays the EVALSHA calls
// the library is seen to send, so it follows the library's scripts as
// they change.
//
//	go run ./cmd/slotbench
//	go run ./cmd/slotbench -redis 127.0.0.1:6379 -o BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys begin with
// "slotbench:" and a random tag, and it deletes them when done.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// opts are the command's settings.
type opts struct {
	addr       string
	out        string
	duration   time.Duration
	rounds     int
	workers    int
	contenders int
	hold       time.Duration
	keys       int
	pool       int
	maxOps     int64
}

// A bench holds what every scenario shares.
type bench struct {
	opts
	client  *redis.Client // the load, for every variant alike
	admin   *redis.Client // statistics, sampling and clean-up, outside the load's pool
	hook    *counter      // counts the load client's commands
	scripts scripts
	prefix  string // begins every key of the run
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("slotbench: ")
	var o opts
	flag.StringVar(&o.addr, "redis", "", "`host:port` of a loopback Redis to use; empty starts a redis-server")
	flag.StringVar(&o.out, "o", "", "also write the report to `file`")
	flag.DurationVar(&o.duration, "duration", 2*time.Second, "length of each measured phase")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the no-contention phases, taken in turns")
	flag.IntVar(&o.workers, "workers", 64, "goroutines of the no-contention, many-keys and batch load")
	flag.IntVar(&o.contenders, "contenders", 200, "workers contending for 60 slots")
	flag.DurationVar(&o.hold, "hold", 2*time.Millisecond, "how long a contender holds its slot")
	flag.IntVar(&o.keys, "keys", 100000, "area codes in the many-keys phase")
	flag.IntVar(&o.pool, "pool", 256, "connections in the load client's pool")
	flag.Int64Var(&o.maxOps, "max-ops", 2_000_000, "most calls in any one phase")
	flag.Parse()
	if flag.NArg() > 0 || o.duration <= 0 || o.rounds < 1 || o.workers < 1 || o.contenders < 1 || o.keys < 1 || o.pool < 1 || o.maxOps < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o opts) error {
	ctx := context.Background()
	r := results{opts: o, command: commandLine()}
	if o.addr == "" {
		srv, err := redistest.Start()
		if err != nil {
			return fmt.Errorf("no -redis given and %w", err)
		}
		defer srv.Close()
		o.addr = srv.Addr
		r.server = "started by slotbench on " + srv.Addr
	} else {
		if !isLoopback(o.addr) {
			return fmt.Errorf("-redis %s: only a loopback address is allowed", o.addr)
		}
		r.server = "at " + o.addr
	}

	b, err := newBench(ctx, o)
	if err != nil {
		return err
	}
	defer b.close(ctx)
	if r.machine, err = describeMachine(ctx, b.admin); err != nil {
		return err
	}

	steps := []struct {
		name string
		run  func() error
	}{
		{"allocations", func() (err error) { r.allocs, err = b.allocs(ctx); return }},
		{"no contention", func() (err error) { r.pairs, err = b.noContention(ctx); return }},
		{"script costs", func() (err error) { r.costs, err = b.scriptCosts(ctx); return }},
		{"contention, polling", func() error { return b.appendContended(ctx, &r, false) }},
		{"contention, Acquire", func() error { return b.appendContended(ctx, &r, true) }},
		{"many keys", func() (err error) { r.many, err = b.manyKeys(ctx); return }},
		{"memory", func() (err error) { r.mem, err = b.memory(ctx); return }},
		{"batch, one caller", func() error { return b.appendBursts(ctx, &r, 1) }},
		{"batch, many callers", func() error { return b.appendBursts(ctx, &r, o.workers) }},
	}
	for _, s := range steps {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "slotbench: %s ...", s.name)
		err := s.run()
		fmt.Fprintf(os.Stderr, " %.1fs\n", time.Since(start).Seconds())
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}

	var report bytes.Buffer
	r.write(&report)
	os.Stdout.Write(report.Bytes())
	if o.out != "" {
		return os.WriteFile(o.out, report.Bytes(), 0o644)
	}
	return nil
}

func (b *bench) appendContended(ctx context.Context, r *results, wait bool) error {
	c, err := b.contention(ctx, wait)
	r.contended = append(r.contended, c)
	return err
}

func (b *bench) appendBursts(ctx context.Context, r *results, callers int) error {
	x, err := b.bursts(ctx, callers)
	r.bursts = append(r.bursts, x)
	return err
}

// newBench connects to o.addr and reads the library's acquire and release
// calls, whose scripts the load client's hook counts.
func newBench(ctx context.Context, o opts) (*bench, error) {
	tag := make([]byte, 4)
	rand.Read(tag)
	b := &bench{
		opts:   o,
		admin:  redis.NewClient(&redis.Options{Addr: o.addr, PoolSize: 4}),
		prefix: "slotbench:" + hex.EncodeToString(tag) + ":",
		scripts: scripts{
			seedAcquire: newScript(seedAcquire),
			seedRelease: newScript(seedRelease),
			twoReads:    newScript(twoReads),
		},
	}
	var err error
	b.scripts.acquire, b.scripts.release, err = b.capture(ctx, slotlimit.Config{Key: b.prefix + "check", Limit: 1, TTL: leaseTTL})
	if err == nil {
		err = b.scripts.load(ctx, b.admin)
	}
	if err != nil {
		b.admin.Close()
		return nil, err
	}
	b.hook = &counter{scripts: map[string]*atomic.Int64{}}
	for _, sha := range []string{b.scripts.acquire.sha, b.scripts.release.sha, b.scripts.seedAcquire.sha, b.scripts.seedRelease.sha} {
		b.hook.scripts[sha] = new(atomic.Int64)
	}
	b.client = redis.NewClient(&redis.Options{Addr: o.addr, PoolSize: o.pool})
	b.client.AddHook(b.hook)
	return b, nil
}

// capture returns the calls the library sends for cfg, checked to be of
// the shape rawLease replays.
func (b *bench) capture(ctx context.Context, cfg slotlimit.Config) (acquire, release call, err error) {
	acquire, release, err = capture(ctx, b.addr, cfg, "slotbench-capture")
	if err == nil {
		err = checkArity(acquire, release)
	}
	return acquire, release, err
}

// close deletes the run's keys and closes the clients.
func (b *bench) close(ctx context.Context) {
	iter := b.admin.Scan(ctx, 0, "*"+b.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		b.admin.Del(ctx, iter.Val())
	}
	b.client.Close()
	b.admin.Close()
}

// commandLine returns how the command was run, naming `go run` for a
// binary that go run built.
func commandLine() string {
	name := os.Args[0]
	if strings.Contains(name, "go-build") {
		name = "go run ./cmd/slotbench"
	}
	return strings.Join(append([]string{name}, os.Args[1:]...), " ")
}
