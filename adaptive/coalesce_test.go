package adaptive_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/observe"
)

// Concurrent tries, and concurrent releases, on one Limiter share one
// script call (a run), which answers each caller as its call alone, made
// in turn, would be answered. These tests hold runs at a gate to see what
// they carry, lose their replies, and end callers' contexts around them.

// A gate is a go-redis hook that counts the holders each run of one
// script carries, and holds the runs that hold picks until opened.
type gate struct {
	sha string // the script's SHA
	per int    // its ARGV per holder, after the 3 it shares

	mu   sync.Mutex
	runs []int            // the holders of each run, in order
	hold func(n int) bool // whether to hold a run of n holders; nil: none
	open chan struct{}    // closed to let the held runs through
	held chan int         // receives the holders of each run held
}

// The scripts' ARGV per holder.
const (
	triesPer    = 2 // acquire.lua: holder, join
	releasesPer = 4 // release.lua: holder, outcome, granted, known
)

// newGate adds to client a gate on the runs of the script of sha.
func newGate(client redis.UniversalClient, sha string, per int) *gate {
	g := &gate{sha: sha, per: per, open: make(chan struct{}), held: make(chan int, 16)}
	client.AddHook(g)
	return g
}

// holdRuns makes g hold the runs that hold picks, until Open.
func (g *gate) holdRuns(hold func(n int) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold = hold
}

// Open lets the runs held through, and then holds those that next picks
// (none when nil).
func (g *gate) Open(next func(n int) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.open)
	g.open, g.hold = make(chan struct{}), next
}

// Runs returns the holders of each run so far.
func (g *gate) Runs() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.runs...)
}

// waitHeld waits for a run to be held and returns its holders.
func (g *gate) waitHeld(t *testing.T) int {
	t.Helper()
	select {
	case n := <-g.held:
		return n
	case <-time.After(20 * time.Second):
		t.Fatal("no run was held")
		return 0
	}
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n, ok := g.run(cmd); ok {
			g.mu.Lock()
			hold, open := g.hold != nil && g.hold(n), g.open
			g.mu.Unlock()
			if hold {
				g.held <- n
				<-open
			}
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts the runs sent in pipelines (with
// Config.Replicas, a run and its WAIT), and holds none.
func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			g.run(cmd)
		}
		return next(ctx, cmds)
	}
}

// run records cmd if it is a run of g's script, and returns its holders.
func (g *gate) run(cmd redis.Cmder) (int, bool) {
	args := cmd.Args()
	if len(args) < 2 || cmd.Name() != "evalsha" || args[1] != g.sha {
		return 0, false
	}
	n := (len(args) - 3 - 5 - 3) / g.per // evalsha, sha, 5, KEYS, shared ARGV
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs = append(g.runs, n)
	return n, true
}

// waitGoroutines waits until n goroutines are blocked in the function
// named in, in the state given ("select", "chan receive").
func waitGoroutines(t *testing.T, n int, state, in string) {
	t.Helper()
	var dump string
	defer func() {
		if t.Failed() {
			t.Log(dump)
		}
	}()
	eventually(t, 20*time.Second, func() bool {
		buf := make([]byte, 1<<20)
		for {
			m := runtime.Stack(buf, true)
			if m < len(buf) {
				buf = buf[:m]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		dump = string(buf)
		count := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(header, "["+state) && strings.Contains(g, in) {
				count++
			}
		}
		return count >= n
	}, fmt.Sprintf("%d goroutines never blocked in %s", n, in))
}

// queued waits until n calls of l, tries and releases, are queued behind
// a run in flight.
func queued(t *testing.T, l *adaptive.Limiter, n int) {
	t.Helper()
	eventually(t, 20*time.Second, func() bool { return adaptive.Queued(l) >= n }, fmt.Sprintf("%d calls never queued", n))
}

// gated returns a Limiter with cfg on a client of b's own whose runs of
// acquire.lua and release.lua pass gates, the scripts cached.
func gated(t *testing.T, b *redistest.Backend, cfg adaptive.Config) (l, plain *adaptive.Limiter, tries, releases *gate) {
	t.Helper()
	plain, key := newLimiter(t, b, cfg)
	cfg.Key = key
	client := b.NewClient(t)
	require.NoError(t, adaptive.LoadScripts(context.Background(), client))
	tries = newGate(client, adaptive.AcquireSHA(), triesPer)
	releases = newGate(client, adaptive.ReleaseSHA(), releasesPer)
	return newLimiterOn(t, client, cfg), plain, tries, releases
}

// A crowd of callers on one key gets exactly what the same calls made
// one by one would: of 30 TryAcquires on a limit of 10, 10 slots and 20
// ErrLimited; 10 Successes with the limit full raise it once per window,
// by one; 11 Dropped lower it once; and each caller hears its own
// Observer event. The same holds with DisableCoalescing.
func TestCrowdGetsWhatCallsInTurnWould(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		for _, disable := range []bool{false, true} {
			t.Run(fmt.Sprintf("DisableCoalescing=%v", disable), func(t *testing.T) {
				rec := &recorder{}
				l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 10, Window: time.Minute,
					Observer: rec, DisableCoalescing: disable})

				slots := crowdTake(t, l, 30)
				assert.Len(t, slots, 10, "slots taken")
				assert.Len(t, rec.of(observe.Refused), 20, "refused")
				assert.Len(t, rec.of(observe.Acquired), 10)
				assert.Equal(t, int64(10), inUse(t, l))

				crowdFree(t, slots, (*adaptive.Slot).Success)
				assert.Equal(t, int64(11), limitOf(t, l), "10 of 10 in use: + 1, once per window")
				assert.Len(t, rec.of(observe.LimitChanged), 1)
				assert.Len(t, rec.of(observe.Released), 10, "one event per release")
				assert.Zero(t, inUse(t, l))

				slots = crowdTake(t, l, 11)
				require.Len(t, slots, 11)
				crowdFree(t, slots, (*adaptive.Slot).Dropped)
				assert.Equal(t, int64(9), limitOf(t, l), "11 × 0.9, once per window")
				assert.Len(t, rec.of(observe.LimitChanged), 2)
				assert.Zero(t, inUse(t, l))
				for _, e := range rec.of(observe.Released) {
					assert.True(t, e.Held, "every slot was live")
				}
			})
		}
	})
}

// crowdTake runs n TryAcquires on l at once and returns the slots taken;
// every other call must be refused.
func crowdTake(t *testing.T, l *adaptive.Limiter, n int) []*adaptive.Slot {
	t.Helper()
	var mu sync.Mutex
	var slots []*adaptive.Slot
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, err := l.TryAcquire(context.Background())
			if err != nil {
				assert.ErrorIs(t, err, adaptive.ErrLimited)
				return
			}
			mu.Lock()
			slots = append(slots, s)
			mu.Unlock()
		})
	}
	wg.Wait()
	return slots
}

// crowdFree frees every slot at once with free, which must answer nil.
func crowdFree(t *testing.T, slots []*adaptive.Slot, free func(*adaptive.Slot, context.Context) error) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(func() { assert.NoError(t, free(s, context.Background())) })
	}
	wg.Wait()
}

// Tries that arrive while one is in flight go to Redis together, as one
// run carrying them all, and so do releases; bad input is refused at once,
// never queued behind a run.
func TestConcurrentCallsShareARun(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		l, _, tries, releases := gated(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 20, Window: time.Minute})
		const crowd = 8

		tries.holdRuns(func(int) bool { return true })
		first := make(chan *adaptive.Slot, 1)
		go func() {
			s, err := l.TryAcquire(ctx)
			assert.NoError(t, err)
			first <- s
		}()
		assert.Equal(t, 1, tries.waitHeld(t), "a lone try is sent at once, alone")
		taken := make(chan *adaptive.Slot, crowd)
		for range crowd {
			go func() {
				s, err := l.TryAcquire(ctx)
				assert.NoError(t, err)
				taken <- s
			}()
		}
		queued(t, l, crowd)

		// Were these queued, they would wait for the run held.
		var nilCtx context.Context
		_, err := l.TryAcquire(nilCtx)
		assert.ErrorIs(t, err, adaptive.ErrInvalidArgument, "refused at once, while a run is in flight")
		assert.ErrorIs(t, (*adaptive.Slot)(nil).Success(ctx), adaptive.ErrInvalidConfig)

		tries.Open(nil)
		slots := []*adaptive.Slot{<-first}
		for range crowd {
			slots = append(slots, <-taken)
		}
		assert.Equal(t, []int{1, crowd}, tries.Runs(), "the lone try, then the crowd in one run")
		assert.Equal(t, int64(crowd+1), inUse(t, l))

		releases.holdRuns(func(int) bool { return true })
		go func() { assert.NoError(t, slots[0].Success(ctx)) }()
		assert.Equal(t, 1, releases.waitHeld(t))
		var wg sync.WaitGroup
		for _, s := range slots[1:] {
			wg.Go(func() { assert.NoError(t, s.Ignore(ctx)) })
		}
		queued(t, l, crowd)
		releases.Open(nil)
		wg.Wait()
		eventually(t, 20*time.Second, func() bool { return len(releases.Runs()) == 2 }, "the releases never ran")
		assert.Equal(t, []int{1, crowd}, releases.Runs(), "the lone release, then the crowd in one run")
		assert.Zero(t, inUse(t, l))
	})
}

// A run whose reply is lost, and that go-redis sends again, answers each
// holder as its first run did: of 8 tries on 4 free slots, 4 hold one
// slot each and 4 are refused; 8 Dropped in one run free 8 slots, each
// answering nil, and lower the limit once.
func TestLostReplyOfARunAnswersEachAsItsFirstRun(t *testing.T) {
	redistest.EachCutBackend(t, adaptive.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		plain, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 5, Window: time.Minute})
		cfg := plain.Config()
		tries := newGate(client, adaptive.AcquireSHA(), triesPer)
		releases := newGate(client, adaptive.ReleaseSHA(), releasesPer)
		l := newLimiterOn(t, client, cfg)
		keys, _ := adaptive.Keys(key)
		const crowd = 8

		// The lone try is held, then the crowd's run, whose reply is cut.
		tries.holdRuns(func(int) bool { return true })
		first := make(chan *adaptive.Slot, 1)
		go func() {
			s, err := l.TryAcquire(ctx)
			assert.NoError(t, err)
			first <- s
		}()
		tries.waitHeld(t)
		type result struct {
			s   *adaptive.Slot
			err error
		}
		results := make(chan result, crowd)
		for range crowd {
			go func() {
				s, err := l.TryAcquire(ctx)
				results <- result{s, err}
			}()
		}
		queued(t, l, crowd)
		tries.Open(func(n int) bool { return n == crowd })
		assert.Equal(t, crowd, tries.waitHeld(t))
		cuts := cutter.Cuts()
		cutter.Arm(1, "evalsha", keys[1])
		tries.Open(nil)
		slots := []*adaptive.Slot{<-first}
		limited := 0
		for range crowd {
			r := <-results
			if r.err != nil {
				assert.ErrorIs(t, r.err, adaptive.ErrLimited)
				limited++
				continue
			}
			slots = append(slots, r.s)
		}
		cutter.RequireOneMore(t, cuts)
		assert.Equal(t, []int{1, crowd, crowd}, tries.Runs(), "one run for the crowd, sent again once its reply was lost")
		assert.Equal(t, 4, limited, "refused as at the first run")
		assert.Len(t, slots, 5)
		assert.Equal(t, int64(5), inUse(t, plain), "each slot taken once")

		// A lone Ignore is held, then 4 Dropped go in one run, whose reply
		// is cut. Of the 4, only the lone try's slot has a known grant, so
		// only its drop counts (the others' tries were sent again).
		releases.holdRuns(func(int) bool { return true })
		ignored := make(chan error, 1)
		go func() { ignored <- slots[1].Ignore(ctx) }()
		releases.waitHeld(t)
		dropped := make(chan error, 4)
		for _, s := range append([]*adaptive.Slot{slots[0]}, slots[2:]...) {
			go func() { dropped <- s.Dropped(ctx) }()
		}
		queued(t, l, 4)
		releases.Open(func(n int) bool { return n == 4 })
		assert.Equal(t, 4, releases.waitHeld(t))
		cuts = cutter.Cuts()
		cutter.Arm(1, "evalsha", keys[1])
		releases.Open(nil)
		require.NoError(t, <-ignored)
		for range 4 {
			assert.NoError(t, <-dropped, "freed before its deadline by the first run")
		}
		cutter.RequireOneMore(t, cuts)
		assert.Equal(t, []int{1, 4, 4}, releases.Runs(), "one run, sent again")
		assert.Zero(t, inUse(t, plain), "each slot freed once")
		assert.Equal(t, int64(4), limitOf(t, plain), "5 × 0.9, once")
	})
}

// A caller whose ctx ends while its call is queued behind a run leaves
// the queue: its error matches ctx.Err() and not ErrOutcomeUnknown, it
// reports Error to the Observer, and nothing of its call reaches Redis.
func TestCtxEndedWhileQueuedSendsNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &recorder{}
		l, _, tries, releases := gated(t, b, adaptive.Config{Min: 1, Max: 20, Initial: 20, Window: time.Minute, Observer: rec})
		slots := take(t, l, 2)

		// A try queued behind a lone try.
		tries.holdRuns(func(int) bool { return true })
		first := make(chan *adaptive.Slot, 1)
		go func() {
			s, err := l.TryAcquire(ctx)
			assert.NoError(t, err)
			first <- s
		}()
		tries.waitHeld(t)
		qctx, cancel := context.WithCancel(ctx)
		late := make(chan error, 1)
		go func() {
			_, err := l.TryAcquire(qctx)
			late <- err
		}()
		queued(t, l, 1)
		cancel()
		err := <-late
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, adaptive.ErrOutcomeUnknown, "nothing was sent")
		tries.Open(nil)
		slots = append(slots, <-first)
		assert.Equal(t, []int{1, 1, 1}, tries.Runs(), "two slots taken before, the lone try; the late one never ran")
		assert.Equal(t, int64(3), inUse(t, l))
		assert.Len(t, rec.of(observe.Error), 1)

		// A release queued behind a lone release: the slot is still held,
		// and freed by the call made again.
		releases.holdRuns(func(int) bool { return true })
		go func() { assert.NoError(t, slots[0].Success(ctx)) }()
		releases.waitHeld(t)
		qctx, cancel = context.WithCancel(ctx)
		go func() { late <- slots[1].Dropped(qctx) }()
		queued(t, l, 1)
		cancel()
		err = <-late
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, adaptive.ErrOutcomeUnknown, "nothing was sent")
		releases.Open(nil)
		eventually(t, 20*time.Second, func() bool { return inUse(t, l) == 2 }, "the lone release never ran")
		assert.Equal(t, []int{1}, releases.Runs(), "the late release never ran")
		require.NoError(t, slots[1].Dropped(ctx), "the slot is still held")
		require.NoError(t, slots[2].Ignore(ctx))
		assert.Equal(t, int64(18), limitOf(t, l), "the one drop counted")
		assert.Len(t, rec.of(observe.Error), 2)
	})
}

// A caller whose ctx ends while the run it is in is in flight (a run
// another caller sends) returns an error matching ctx.Err() and holds
// nothing, as a lone call does: a TryAcquire's error also matches
// ErrOutcomeUnknown, and it frees the slot the run took for it; an
// Acquire leaves the queue the run put it in. Both wait for the run to
// come back before they free what it did.
func TestCtxEndedInFlightHoldsNothing(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		for _, c := range []struct {
			name    string
			initial int64 // the limit: room for every try, or for the first alone
			take    func(*adaptive.Limiter, context.Context) (*adaptive.Slot, error)
		}{
			{"TryAcquire takes", 10, (*adaptive.Limiter).TryAcquire},
			{"Acquire queues", 1, (*adaptive.Limiter).Acquire},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				l, _, tries, _ := gated(t, b, adaptive.Config{Min: 1, Max: 20, Initial: c.initial, Window: time.Minute})

				tries.holdRuns(func(int) bool { return true })
				first := make(chan *adaptive.Slot, 1)
				go func() {
					s, err := l.TryAcquire(ctx)
					assert.NoError(t, err)
					first <- s
				}()
				tries.waitHeld(t)
				fctx, cancel := context.WithCancel(ctx)
				type result struct {
					s   *adaptive.Slot
					err error
				}
				results := make(chan result, 2)
				// The other call first, so that it sends the run: the one
				// that sends a run waits for it, whatever its ctx.
				for i, cctx := range []context.Context{ctx, fctx} {
					go func() {
						s, err := c.take(l, cctx)
						results <- result{s, err}
					}()
					queued(t, l, i+1)
				}
				tries.Open(func(int) bool { return true })
				assert.Equal(t, 2, tries.waitHeld(t), "the two calls in one run")
				cancel()
				// The cancelled call returns at once, and waits in leave for
				// its run to come back before it frees what the run did.
				waitGoroutines(t, 1, "select", "adaptive.(*Slot).leave")
				tries.Open(nil)
				slot := <-first
				var gotErr error
				var other *adaptive.Slot
				for range 2 {
					if c.initial == 1 && gotErr != nil {
						// The other call queued too; the first slot's release
						// hands it that slot.
						require.NoError(t, slot.Ignore(ctx))
						slot = nil
					}
					select {
					case r := <-results:
						if r.err != nil {
							gotErr = r.err
							continue
						}
						other = r.s
					case <-time.After(20 * time.Second):
						t.Fatal("a call never returned")
					}
				}
				assert.ErrorIs(t, gotErr, context.Canceled)
				if c.initial > 1 {
					assert.ErrorIs(t, gotErr, adaptive.ErrOutcomeUnknown)
				} // an Acquire whose ctx ended says so alone, having left the queue
				require.NotNil(t, other)
				info, err := l.Inspect(ctx)
				require.NoError(t, err)
				var ids []string
				for _, h := range info.Holders {
					ids = append(ids, h.ID)
				}
				want := []string{other.ID()}
				if slot != nil {
					want = append(want, slot.ID())
				}
				assert.ElementsMatch(t, want, ids, "the cancelled call holds nothing")
				assert.Zero(t, info.Waiters, "nor waits")
			})
		}
	})
}

// With Config.Replicas and the replica cut off, a run of tries fails as a
// lone try does, with ErrNotReplicated for each, and each frees what the
// run took for it.
func TestRunNotReplicatedHoldsNothing(t *testing.T) {
	r := redistest.StartReplicated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := replicaLimit(t, 500*time.Millisecond)
	cfg.Initial = 10
	client := redis.NewClient(r.Client.Options())
	t.Cleanup(func() { client.Close() })
	tries := newGate(client, adaptive.AcquireSHA(), triesPer)
	l := newLimiterOn(t, client, cfg)
	warm := newLimiterOn(t, r.Client, replicaLimit(t, 10*time.Second))
	s, err := warm.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Ignore(ctx))
	r.CutOff(t)

	const crowd = 8
	errs := make(chan error, crowd)
	for range crowd {
		go func() {
			_, err := l.TryAcquire(ctx)
			errs <- err
		}()
	}
	for range crowd {
		assert.ErrorIs(t, <-errs, adaptive.ErrNotReplicated)
	}
	assert.Empty(t, holdsOn(t, r.Client, cfg.Key), "every slot taken on the master is freed")
	assert.Greater(t, slices.Max(tries.Runs()), 1, "a run carried many tries")
}
