// Devicereport simulates a fleet of devices that share an external system
// which accepts only so many callers at once, and checks that a
// slotlimit.Limiter keeps them within that limit.
//
// A business system hands tasks to devices, and each task makes a device
// call the external system, which takes at most -limit devices at once.
// Every device reports every -report period, with jitter. On a report the
// handler takes a slot for the device with TryAcquire, if one is free, and
// hands out a task; when the device reports the task's result, on its next
// report, the handler frees the slot with Release. A fraction -crash of the
// tasks end with the device crashing after its call: it never reports back,
// so its slot stays taken until its lease lapses, -lease after it was taken,
// and then comes back by itself. That idle slot is the price of safety: the
// handler cannot tell a crashed device from a slow one.
//
// The run lasts -duration. Then the program waits one lease more and prints
// the most devices that called the external system at once, the tasks done
// and refused, and whether every crashed device's slot came back. It exits
// with status 1 if the limit was ever exceeded or a slot was not reclaimed.
//
// By default it runs on an embedded miniredis:
//
//	go run ./examples/devicereport
//
// Against a Redis server it uses a key of its own, deleted at the end:
//
//	go run ./examples/devicereport -redis 127.0.0.1:6379
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
)

// areaKey is the Redis key of the slots for the external system's area.
const areaKey = "ar:0571"

// callTimeout bounds each Redis call.
const callTimeout = 2 * time.Second

// options are the command-line flags.
type options struct {
	redisAddr string
	devices   int
	limit     int64
	duration  time.Duration
	report    time.Duration
	lease     time.Duration
	crash     float64
	work      time.Duration
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("devicereport: ")
	opts := parseFlags()
	if err := run(opts); err != nil {
		log.Fatal(err)
	}
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.redisAddr, "redis", "", "Redis `host:port`; empty runs an embedded miniredis")
	flag.IntVar(&o.devices, "devices", 2000, "number of devices")
	flag.Int64Var(&o.limit, "limit", 60, "most devices at the external system at once")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "how long the devices run")
	flag.DurationVar(&o.report, "report", 300*time.Millisecond, "mean time between two reports of a device")
	flag.DurationVar(&o.lease, "lease", time.Second, "slot lease time")
	flag.Float64Var(&o.crash, "crash", 0.02, "fraction of tasks whose device crashes before reporting the result")
	flag.DurationVar(&o.work, "work", 50*time.Millisecond, "mean time of a call to the external system")
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

func run(o options) error {
	if err := o.check(); err != nil {
		return err
	}
	srv, err := openServer(o.redisAddr)
	if err != nil {
		return err
	}
	defer srv.close()

	lim, err := slotlimit.New(srv.client, slotlimit.Config{Key: srv.key, Limit: o.limit, TTL: o.lease})
	if err != nil {
		return err
	}
	fmt.Printf("devicereport: %d devices, limit %d, lease %v, %v on %s\n",
		o.devices, o.limit, o.lease, o.duration, srv.name)

	sim := newSimulation(o, lim)
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	sim.run(ctx)

	// Every lease was taken before the devices stopped, so all of them
	// have lapsed or been released a lease time later.
	time.Sleep(o.lease + 100*time.Millisecond)
	return sim.report(context.Background())
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
func openServer(addr string) (*server, error) {
	s := &server{name: "redis " + addr, key: areaKey}
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, err
		}
		mr.ClockTTL(true) // key expiry follows the wall clock, as in Redis
		s.mr, s.name, addr = mr, "embedded miniredis", mr.Addr()
	} else {
		// A key of its own keeps the run clear of any data already there.
		s.key = fmt.Sprintf("%s:devicereport-%016x", areaKey, rand.Uint64())
	}
	s.client = redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})

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
	opts options
	lim  *slotlimit.Limiter

	callers   gauge        // devices calling the external system
	slotsUsed maxInt64     // most slots in use, as Redis counted them
	slowest   maxInt64     // longest Redis call, in nanoseconds
	done      atomic.Int64 // results reported
	late      atomic.Int64 // results reported after the lease lapsed
	refused   atomic.Int64 // reports refused a task
	redisErrs atomic.Int64
	firstErr  atomic.Pointer[error]

	mu      sync.Mutex
	crashed map[string]bool // devices that crashed holding a slot
}

func newSimulation(o options, lim *slotlimit.Limiter) *simulation {
	return &simulation{opts: o, lim: lim, crashed: make(map[string]bool)}
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

// device reports every period until ctx is done or it crashes. A device
// without a task asks for one; a device with a task reports its result.
func (s *simulation) device(ctx context.Context, id string) {
	hasTask := false
	// The first report comes at a random point of the first period, so
	// that the devices do not all report at once.
	wait := rand.N(s.opts.report)
	for sleep(ctx, wait) {
		wait = jitter(s.opts.report)
		if hasTask {
			s.reportResult(ctx, id)
			hasTask = false
			continue
		}
		if !s.assignTask(ctx, id) {
			continue
		}
		s.callExternal(ctx)
		if rand.Float64() < s.opts.crash {
			s.crash(id)
			return
		}
		hasTask = true
	}
	// The run is over: a device that still has a task gives its slot back.
	if hasTask {
		s.release(ctx, id)
	}
}

// assignTask handles a report from a device without a task: it takes a
// slot for the device and reports whether it got one.
func (s *simulation) assignTask(ctx context.Context, id string) bool {
	callCtx, cancel := callContext(ctx)
	defer cancel()
	defer s.timeCall(time.Now())
	res, err := s.lim.TryAcquire(callCtx, id)
	if err != nil {
		// The slot may have been taken all the same; releasing is safe
		// either way.
		s.redisError(err)
		s.release(ctx, id)
		return false
	}
	s.slotsUsed.observe(res.Count)
	if !res.Acquired {
		s.refused.Add(1)
		return false
	}
	return true
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
	held, err := s.lim.Release(ctx, id)
	if err != nil {
		s.redisError(err)
		return true // unknown; not counted as late
	}
	return held
}

// callExternal stands for one call to the external system.
func (s *simulation) callExternal(ctx context.Context) {
	s.callers.inc()
	defer s.callers.dec()
	sleep(ctx, jitter(s.opts.work))
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

// report prints what happened and checks it: no more callers than the
// limit, and no slot left to a crashed device once its lease lapsed.
func (s *simulation) report(ctx context.Context) error {
	problems := s.reportTasks()
	problems = append(problems, s.reportSlots(ctx)...)
	if len(problems) > 0 {
		return errors.New("FAIL: " + strings.Join(problems, "; "))
	}
	return nil
}

// reportTasks prints what the devices did, and returns what went wrong.
func (s *simulation) reportTasks() (problems []string) {
	limit, peak := s.opts.limit, s.callers.peak.load()
	fmt.Printf("peak concurrent callers at the external system: %d (limit %d)\n", peak, limit)
	fmt.Printf("peak slots in use: %d of %d (a slot is held until the result is reported)\n", s.slotsUsed.load(), limit)
	fmt.Printf("tasks done: %d   refused reports: %d   redis errors: %d\n",
		s.done.Load(), s.refused.Load(), s.redisErrs.Load())
	if p := s.firstErr.Load(); p != nil {
		fmt.Printf("first redis error: %v\n", *p)
	}
	if n := s.late.Load(); n > 0 {
		// Another device could have taken the slot before this one reported.
		slowest := time.Duration(s.slowest.load()).Round(time.Millisecond)
		fmt.Printf("results reported after their lease lapsed: %d (slowest redis call %v: -lease is too short or the server overloaded)\n", n, slowest)
	}
	if peak > limit {
		problems = append(problems, fmt.Sprintf("%d devices called the external system at once, over the limit of %d", peak, limit))
	}
	return problems
}

// reportSlots asks Redis which slots are still held, now that every lease
// has lapsed or been released, prints what it found and returns what went
// wrong.
func (s *simulation) reportSlots(ctx context.Context) (problems []string) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	holders, err := s.lim.Holders(ctx)
	if err != nil {
		return []string{fmt.Sprintf("cannot list the holders: %v", err)}
	}
	inUse, err := s.lim.Count(ctx)
	if err != nil {
		return []string{fmt.Sprintf("cannot count the slots: %v", err)}
	}

	s.mu.Lock()
	crashed, stuck := len(s.crashed), 0
	for _, h := range holders {
		if s.crashed[h.ID] {
			stuck++
		}
	}
	s.mu.Unlock()

	fmt.Printf("devices crashed holding a slot: %d   slots reclaimed from them: %d of %d\n",
		crashed, crashed-stuck, crashed)
	fmt.Printf("slots in use at the end: %d\n", inUse)
	if stuck > 0 {
		problems = append(problems, fmt.Sprintf("%d crashed devices still hold a slot after their lease", stuck))
	}
	if inUse > 0 {
		problems = append(problems, fmt.Sprintf("%d slots still in use after every lease lapsed", inUse))
	}
	return problems
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
