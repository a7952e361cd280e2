// Devicereport simulates a fleet of devices that share an external system
// which accepts only so many callers at once, and checks that a
// slotlimit.Limiter keeps them within that limit and reclaims the slots of
// devices that crash.
//
// A business system hands tasks to devices, and each task makes a device
// call the external system, which takes at most -limit devices at once.
// A device without a task reports every -report period, with jitter. On a
// report the handler takes a slot for the device with TryAcquire, if one is
// free, and hands out a task; the device calls the external system for
// about -work, then reports the task's result, and the handler frees the
// slot with Release. When every slot is taken the report is refused and the
// device tries again on its next report. A fraction -crash of the tasks,
// spread evenly, end with the device crashing after its call: it never
// reports back, so its slot stays taken until its lease lapses, -lease
// after it was taken, and then comes back by itself. That idle slot is the
// price of safety: the handler cannot tell a crashed device from a slow
// one.
//
// Each second the program prints the slots in use, the tasks done, the
// reports refused and the crashed devices' slots reclaimed so far. The
// devices run for -duration; then the program waits, at most a lease more,
// for the slots still held to lapse, and ends with a verdict. It counts
// the devices inside the external system with an in-process counter, so
// the peak it reports is what the external system would have seen. It
// exits with status 1 if that peak ever exceeded the limit, or if a slot
// was not reclaimed once its lease lapsed. Redis errors and results
// reported after their lease lapsed are reported too, but do not fail the
// run by themselves: a failed call is not a limit violation, and a device
// that kept calling after its lease lapsed shows in the peak.
//
// By default it runs on an embedded miniredis:
//
//	go run ./examples/devicereport
//
// Against a Redis server it uses a key of its own, deleted at the end, or
// the key -key names, to watch it with the slotlimit command meanwhile:
//
//	go run ./examples/devicereport -redis 127.0.0.1:6379
//	go run ./examples/devicereport -redis 127.0.0.1:6379 -key ar:0571 -duration 1m &
//	go run ./cmd/slotlimit -u redis://127.0.0.1:6379 watch ar:0571
//
// The flags are:
//
//	-redis host:port  Redis server; empty runs an embedded miniredis
//	-key key          the limiter's key on a real server; empty: one of the run's own
//	-devices n        number of devices (2000)
//	-limit n          most devices at the external system at once (60)
//	-duration d       how long the devices run (10s)
//	-report d         mean time between two reports of a device without a task (15s)
//	-work d           mean time of a call to the external system (1s)
//	-lease d          slot lease time (4s)
//	-crash f          fraction of tasks whose device crashes before reporting the result (0.02)
//
// The defaults keep an embedded miniredis, which runs every script in a
// fresh Lua interpreter, well within two cores, even under the race
// detector: about 130 reports a second and 60 results. The lease is more
// than twice the longest call to the external system, so that a slow Redis
// call does not make a result late.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/examplefmt"
)

// areaKey is the Redis key of the slots for the external system's area.
const areaKey = "ar:0571"

// callTimeout bounds each Redis call of a device.
const callTimeout = 2 * time.Second

// progressTimeout bounds the Redis call behind each line of progress, so
// that the lines keep coming once a second.
const progressTimeout = 500 * time.Millisecond

// options are the command-line flags.
type options struct {
	redisAddr string
	key       string
	devices   int
	limit     int64
	duration  time.Duration
	report    time.Duration
	work      time.Duration
	lease     time.Duration
	crash     float64
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("devicereport: ")
	opts := parseFlags()
	passed, err := run(opts)
	if err != nil {
		log.Fatal(err)
	}
	if !passed {
		os.Exit(1)
	}
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.redisAddr, "redis", "", "Redis `host:port`; empty runs an embedded miniredis")
	flag.StringVar(&o.key, "key", "", "the limiter's `key` on a real server, such as ar:0571 to watch it with cmd/slotlimit; empty: a key of the run's own")
	flag.IntVar(&o.devices, "devices", 2000, "number of devices")
	flag.Int64Var(&o.limit, "limit", 60, "most devices at the external system at once")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long the devices run")
	flag.DurationVar(&o.report, "report", 15*time.Second, "mean time between two reports of a device without a task")
	flag.DurationVar(&o.work, "work", time.Second, "mean time of a call to the external system")
	flag.DurationVar(&o.lease, "lease", 4*time.Second, "slot lease time")
	flag.Float64Var(&o.crash, "crash", 0.02, "fraction of tasks whose device crashes before reporting the result")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	return o
}

func (o options) check() error {
	switch {
	case o.devices < 1:
		return errors.New("-devices must be at least 1")
	case o.duration <= 0, o.report <= 0, o.lease <= 0, o.work < 0:
		return errors.New("-duration, -report and -lease must be positive, -work not negative")
	case o.crash < 0 || o.crash > 1:
		return errors.New("-crash must be between 0 and 1")
	}
	return nil
}

// run runs the simulation and reports whether it passed. An error means it
// could not run at all.
func run(o options) (passed bool, err error) {
	if err := o.check(); err != nil {
		return false, err
	}
	srv, err := openServer(o.redisAddr, o.key)
	if err != nil {
		return false, err
	}
	defer srv.close()

	// CountRefusals keeps a count in Redis for cmd/slotlimit's watch.
	lim, err := slotlimit.New(srv.client, slotlimit.Config{Key: srv.key, Limit: o.limit, TTL: o.lease, CountRefusals: true})
	if err != nil {
		return false, err
	}
	fmt.Printf("devicereport: %s devices reporting every ~%v, limit %d, calls of ~%v, lease %v, %v on %s\n",
		examplefmt.Int(int64(o.devices)), o.report, o.limit, o.work, o.lease, o.duration, srv.name)
	if longest := o.work * 3 / 2; o.lease <= longest {
		fmt.Printf("warning: the lease, %v, is not longer than the longest call, %v: some results will come back after their lease lapsed\n",
			o.lease, longest)
	}

	sim := newSimulation(o, lim)
	progressCtx, stopProgress := context.WithCancel(context.Background())
	var progress sync.WaitGroup
	progress.Go(func() { sim.progress(progressCtx) })

	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	sim.run(ctx)

	// Every lease was taken before the devices stopped, so all of them
	// have lapsed or been released a lease time later.
	wait := o.lease + 500*time.Millisecond
	fmt.Printf("devices stopped; waiting at most %v for the slots still held to lapse\n", wait)
	sim.drain(wait)
	stopProgress()
	progress.Wait()

	return sim.report(context.Background()), nil
}

// A server is the Redis the devices share.
type server struct {
	client *redis.Client
	name   string               // for the report
	key    string               // the key of the slots
	mr     *miniredis.Miniredis // nil for a real server
}

// openServer connects to the Redis at addr, or starts a miniredis when
// addr is empty.
func openServer(addr, key string) (*server, error) {
	s := &server{name: "redis " + addr, key: areaKey}
	if key != "" {
		s.key = key
	}
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, err
		}
		mr.ClockTTL(true) // key expiry follows the wall clock, as in Redis
		s.mr, s.name, addr = mr, "embedded miniredis", mr.Addr()
	} else if key == "" {
		// A key of its own keeps the run clear of any data already there.
		s.key = fmt.Sprintf("%s:devicereport-%016x", areaKey, rand.Uint64())
	}
	s.client = redis.NewClient(&redis.Options{
		Addr:                  addr,
		PoolSize:              64,
		ContextTimeoutEnabled: true, // a call ends with its context, not a socket timeout
	})

	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := s.client.Ping(ctx).Err(); err != nil {
		s.client.Close()
		if s.mr != nil {
			s.mr.Close()
		}
		return nil, fmt.Errorf("connect to %s: %w", s.name, err)
	}
	return s, nil
}

// close deletes the key from a real server and disconnects.
func (s *server) close() {
	if s.mr != nil {
		s.client.Close()
		s.mr.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := s.client.Del(ctx, s.key).Err(); err != nil {
		log.Printf("delete %s: %v", s.key, err)
	}
	s.client.Close()
}

// A simulation is the fleet of devices and what they did.
type simulation struct {
	opts  options
	lim   *slotlimit.Limiter
	start time.Time

	callers   gauge        // devices calling the external system
	slotsUsed maxInt64     // most slots in use, as Redis counted them
	slowest   maxInt64     // longest Redis call, in nanoseconds
	tasks     atomic.Int64 // tasks handed out
	done      atomic.Int64 // results reported
	late      atomic.Int64 // results reported after the lease lapsed
	refused   atomic.Int64 // reports refused a task
	redisErrs atomic.Int64
	firstErr  atomic.Pointer[error]

	mu      sync.Mutex
	crashed map[string]bool // devices that crashed holding a slot
}

func newSimulation(o options, lim *slotlimit.Limiter) *simulation {
	return &simulation{opts: o, lim: lim, start: time.Now(), crashed: make(map[string]bool)}
}

// run runs every device until ctx is done and they have all stopped.
func (s *simulation) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range s.opts.devices {
		id := fmt.Sprintf("dev-%05d", i)
		wg.Go(func() { s.device(ctx, id) })
	}
	wg.Wait()
}

// device reports every period until ctx is done or it crashes. On each
// report it asks for a task; given one, it calls the external system and
// then reports the result.
func (s *simulation) device(ctx context.Context, id string) {
	// The first report comes at a random point of the first period, so
	// that the devices do not all report at once.
	wait := rand.N(s.opts.report)
	for sleep(ctx, wait) {
		wait = jitter(s.opts.report)
		task, ok := s.assignTask(ctx, id)
		if !ok {
			continue
		}
		if !s.callExternal(ctx) {
			// The run ended during the call: the device gives its slot back.
			s.release(ctx, id)
			return
		}
		if s.crashes(task) {
			s.crash(id)
			return
		}
		s.reportResult(ctx, id)
	}
}

// assignTask handles a report from a device without a task: it takes a
// slot for the device and, if it got one, returns the task's number.
func (s *simulation) assignTask(ctx context.Context, id string) (task int64, ok bool) {
	callCtx, cancel := callContext(ctx)
	defer cancel()
	start := time.Now()
	res, err := s.lim.TryAcquire(callCtx, id)
	s.timeCall(start)
	if err != nil {
		// The slot may have been taken all the same; releasing is safe
		// either way.
		s.redisError(err)
		s.release(ctx, id)
		return 0, false
	}
	s.slotsUsed.observe(res.Count)
	if !res.Acquired {
		s.refused.Add(1)
		return 0, false
	}
	return s.tasks.Add(1), true
}

// reportResult handles a report carrying a task's result: the device is
// done with the external system, so its slot is freed.
func (s *simulation) reportResult(ctx context.Context, id string) {
	s.done.Add(1)
	if !s.release(ctx, id) {
		s.late.Add(1)
	}
}

// release frees the device's slot and reports whether it was still held.
// An error is counted; the lease then lapses by itself.
func (s *simulation) release(ctx context.Context, id string) bool {
	ctx, cancel := callContext(ctx)
	defer cancel()
	defer s.timeCall(time.Now())
	err := s.lim.Release(ctx, id)
	if errors.Is(err, slotlimit.ErrNotHeld) {
		return false
	}
	if err != nil {
		s.redisError(err)
		return true // unknown; not counted as late
	}
	return true
}

// callExternal stands for one call to the external system. It reports
// whether the call finished before ctx was done.
func (s *simulation) callExternal(ctx context.Context) bool {
	s.callers.inc()
	defer s.callers.dec()
	return sleep(ctx, jitter(s.opts.work))
}

// crashes reports whether the device doing task, numbered from 1, crashes.
// One task in 1/crash does, spread evenly from the first, so that even a
// short run has crashes.
func (s *simulation) crashes(task int64) bool {
	c := s.opts.crash
	return math.Ceil(float64(task)*c) > math.Ceil(float64(task-1)*c)
}

// crash records that the device stopped for good while holding a slot.
func (s *simulation) crash(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashed[id] = true
}

// timeCall records the time taken by a Redis call that began at start.
func (s *simulation) timeCall(start time.Time) {
	s.slowest.observe(int64(time.Since(start)))
}

func (s *simulation) redisError(err error) {
	if s.redisErrs.Add(1) == 1 {
		s.firstErr.Store(&err)
	}
}

// progress prints a line a second until ctx is done. Its own Redis calls
// are not counted among the devices' calls.
func (s *simulation) progress(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			return
		case now = <-tick.C:
		}
		// A Redis too slow to answer within the second shows as "?".
		inUse, reclaimed := "?", "?"
		queryCtx, cancel := context.WithTimeout(ctx, progressTimeout)
		if sl, err := s.slots(queryCtx); err == nil {
			inUse = strconv.Itoa(sl.inUse)
			reclaimed = fmt.Sprintf("%d of %d", sl.crashed-sl.stuck, sl.crashed)
		}
		cancel()
		line := fmt.Sprintf("%4.0fs  in use %s/%d  done %s  refused %s  reclaimed %s",
			now.Sub(s.start).Seconds(), inUse, s.opts.limit,
			examplefmt.Int(s.done.Load()), examplefmt.Int(s.refused.Load()), reclaimed)
		if n := s.redisErrs.Load(); n > 0 {
			line += "  redis errors " + examplefmt.Int(n)
		}
		fmt.Println(line)
	}
}

// drain waits until no slot is in use, or for at most d.
func (s *simulation) drain(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		ctx, cancel := callContext(context.Background())
		n, err := s.lim.Count(ctx)
		cancel()
		if err == nil && n == 0 {
			return
		}
	}
}

// slotState is what Redis says of the slots.
type slotState struct {
	inUse   int // slots in use
	crashed int // devices that crashed holding a slot
	stuck   int // crashed devices that still hold it
}

// slots asks Redis which slots are held.
func (s *simulation) slots(ctx context.Context) (slotState, error) {
	// The crashed devices are listed first: each of them then held its
	// slot, so one missing from the holders has had its slot reclaimed.
	s.mu.Lock()
	crashed := make(map[string]bool, len(s.crashed))
	for id := range s.crashed {
		crashed[id] = true
	}
	s.mu.Unlock()

	holders, err := s.lim.Holders(ctx)
	if err != nil {
		return slotState{}, err
	}
	st := slotState{inUse: len(holders), crashed: len(crashed)}
	for _, h := range holders {
		if crashed[h.ID] {
			st.stuck++
		}
	}
	return st, nil
}

// report prints what happened and the verdict, and reports whether the
// run passed: no more callers than the limit, and no slot left once every
// lease lapsed.
func (s *simulation) report(ctx context.Context) (passed bool) {
	limit, peak := s.opts.limit, s.callers.peak.load()
	done, errs, late := s.done.Load(), s.redisErrs.Load(), s.late.Load()
	slowest := time.Duration(s.slowest.load()).Round(time.Millisecond)
	fmt.Printf("peak at the external system: %d devices at once (limit %d); peak slots in use: %d\n",
		peak, limit, s.slotsUsed.load())
	fmt.Printf("tasks done: %s   reports refused: %s   slowest redis call: %v\n",
		examplefmt.Int(done), examplefmt.Int(s.refused.Load()), slowest)

	var problems []string
	if peak > limit {
		problems = append(problems, fmt.Sprintf("%d devices called the external system at once, over the limit of %d", peak, limit))
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	st, err := s.slots(ctx)
	if err != nil {
		problems = append(problems, fmt.Sprintf("cannot list the slots still held: %v", err))
	} else {
		fmt.Printf("devices crashed holding a slot: %d   slots reclaimed from them: %d   slots in use at the end: %d\n",
			st.crashed, st.crashed-st.stuck, st.inUse)
		if st.stuck > 0 {
			problems = append(problems, fmt.Sprintf("%d of %d crashed devices still hold a slot after their lease", st.stuck, st.crashed))
		}
		if other := st.inUse - st.stuck; other > 0 {
			problems = append(problems, fmt.Sprintf("%d other slots still in use after every lease lapsed", other))
		}
	}

	// Neither of these breaks the limit: a failed call leaves at most a
	// slot that lapses with its lease, and a device that called on after
	// its lease lapsed is counted in the peak above.
	if errs > 0 {
		fmt.Printf("redis errors: %s (first: %v); each cost a device a report, or left its slot to lapse rather than be released; if Redis is overloaded, raise -report or lower -devices\n",
			examplefmt.Int(errs), *s.firstErr.Load())
	}
	if late > 0 {
		fmt.Printf("results reported after their lease lapsed: %s; the lease is too short for the calls, or Redis is overloaded: raise -lease, or lower -work or the load\n",
			examplefmt.Int(late))
	}
	var notes string
	if errs > 0 || late > 0 {
		notes = fmt.Sprintf(" (%s redis errors and %s late results, which alone do not fail the run)",
			examplefmt.Int(errs), examplefmt.Int(late))
	}

	if len(problems) > 0 {
		fmt.Printf("FAIL: %s%s\n", strings.Join(problems, "; "), notes)
		return false
	}
	fmt.Printf("PASS: peak %d ≤ limit %d, %s tasks done, %d of %d crashed devices' slots reclaimed%s\n",
		peak, limit, examplefmt.Int(done), st.crashed-st.stuck, st.crashed, notes)
	return true
}

// A gauge is a count that goes up and down, and remembers its peak.
type gauge struct {
	n    atomic.Int64
	peak maxInt64
}

func (g *gauge) inc() { g.peak.observe(g.n.Add(1)) }
func (g *gauge) dec() { g.n.Add(-1) }

// A maxInt64 is the largest value observed so far.
type maxInt64 struct {
	v atomic.Int64
}

func (m *maxInt64) observe(n int64) {
	for {
		old := m.v.Load()
		if n <= old || m.v.CompareAndSwap(old, n) {
			return
		}
	}
}

func (m *maxInt64) load() int64 { return m.v.Load() }

// callContext bounds one Redis call. It is detached from the end of the run,
// so that a report under way finishes rather than fails when the run ends.
func callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
}

// sleep waits for d and reports whether it did so before ctx was done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter returns a random duration between d/2 and 3d/2.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d)
}
