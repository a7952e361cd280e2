package slotlimit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// A primitive under a Cluster event: take tries to take one unit of it
// for a caller (wait: by the call that waits), and returns the function
// that gives it back, or ok false when it was refused; held reads how many
// units the server holds now.
type eventSubject struct {
	limit int64
	take  func(ctx context.Context, wait bool) (give func(context.Context) error, ok bool, err error)
	held  func(ctx context.Context) (int64, error)
	// refused reports whether err is the primitive's refusal.
	refused func(err error) bool
}

// eventSubjects builds each primitive on client with replicas, on a key of
// its own.
func eventSubjects(t *testing.T, client redis.UniversalClient, replicas int, tag string) map[string]eventSubject {
	t.Helper()
	timeout := 500 * time.Millisecond
	limiter, err := slotlimit.New(client, slotlimit.Config{Key: "event:" + tag + ":limiter", Limit: 4, TTL: 5 * time.Second,
		Replicas: replicas, ReplicaTimeout: timeout})
	require.NoError(t, err)
	mutex, err := lock.New(client, lock.Config{Key: "event:" + tag + ":lock", TTL: 5 * time.Second,
		Replicas: replicas, ReplicaTimeout: timeout})
	require.NoError(t, err)
	adaptiveLimiter, err := adaptive.New(client, adaptive.Config{Key: "event:" + tag + ":adaptive", Min: 4, Max: 4, TTL: 5 * time.Second,
		Replicas: replicas, ReplicaTimeout: timeout})
	require.NoError(t, err)
	var holders atomic.Int64
	return map[string]eventSubject{
		"limiter": {
			limit: 4,
			take: func(ctx context.Context, wait bool) (func(context.Context) error, bool, error) {
				holder := fmt.Sprintf("h%d", holders.Add(1))
				var res slotlimit.Result
				var err error
				if wait {
					res, err = limiter.Acquire(ctx, holder)
				} else {
					res, err = limiter.TryAcquire(ctx, holder)
				}
				if err != nil || !res.Acquired {
					return nil, false, err
				}
				return func(ctx context.Context) error { return limiter.Release(ctx, holder) }, true, nil
			},
			held:    limiter.Count,
			refused: func(error) bool { return false },
		},
		"lock": {
			limit: 1,
			take: func(ctx context.Context, wait bool) (func(context.Context) error, bool, error) {
				var l *lock.Lock
				var err error
				if wait {
					l, err = mutex.Lock(ctx)
				} else {
					l, err = mutex.TryLock(ctx)
				}
				if err != nil {
					return nil, false, err
				}
				return l.Unlock, true, nil
			},
			held: func(ctx context.Context) (int64, error) {
				info, err := mutex.Inspect(ctx)
				if err != nil || info.Token == "" {
					return 0, err
				}
				return 1, nil
			},
			refused: func(err error) bool { return errors.Is(err, lock.ErrNotObtained) },
		},
		"adaptive": {
			limit: 4,
			take: func(ctx context.Context, wait bool) (func(context.Context) error, bool, error) {
				var s *adaptive.Slot
				var err error
				if wait {
					s, err = adaptiveLimiter.Acquire(ctx)
				} else {
					s, err = adaptiveLimiter.TryAcquire(ctx)
				}
				if err != nil {
					return nil, false, err
				}
				return s.Ignore, true, nil
			},
			held: func(ctx context.Context) (int64, error) {
				info, err := adaptiveLimiter.Inspect(ctx)
				return info.InUse, err
			},
			refused: func(err error) bool { return errors.Is(err, adaptive.ErrLimited) },
		},
	}
}

// documented reports whether err is one the docs name for a call that
// met a failover or a moving slot. Without Replicas, a failover may lose
// the last writes the master acknowledged, so a release may find its
// lease gone.
func documented(err error, replicas int) bool {
	if replicas == 0 && notHeld(err) {
		return true
	}
	for _, known := range []error{slotlimit.ErrOutcomeUnknown, slotlimit.ErrNotReplicated, lock.ErrNotReplicated,
		adaptive.ErrNotReplicated, context.DeadlineExceeded} {
		if errors.Is(err, known) {
			return true
		}
	}
	return false
}

var debugEvents = os.Getenv("DEBUG_EVENTS") != ""

// notHeld reports whether err is a primitive's ErrNotHeld.
func notHeld(err error) bool {
	return errors.Is(err, slotlimit.ErrNotHeld) || errors.Is(err, lock.ErrNotHeld) || errors.Is(err, adaptive.ErrNotHeld)
}

// errorKind names the documented error err matches, for the log.
func errorKind(err error) string {
	for _, k := range []struct {
		name string
		err  error
	}{
		{"deadline", context.DeadlineExceeded}, {"not replicated", slotlimit.ErrNotReplicated}, {"not replicated", lock.ErrNotReplicated},
		{"not replicated", adaptive.ErrNotReplicated}, {"not held", slotlimit.ErrNotHeld}, {"not held", lock.ErrNotHeld},
		{"not held", adaptive.ErrNotHeld}, {"outcome unknown", slotlimit.ErrOutcomeUnknown},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}

// An eventRun is what callers saw while a Cluster event ran.
type eventRun struct {
	replicas  int
	mu        sync.Mutex
	inUse     atomic.Int64
	most      atomic.Int64 // the most units callers held at once
	told      int          // calls that returned an error, after which a unit may stay held until its lease lapses
	strange   []error      // errors the docs do not name
	kinds     map[string]int
	lastError time.Time // when the last call that failed began
	successes []time.Time
}

// failed records the error of a call that began at start.
func (r *eventRun) failed(start time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told++
	if start.After(r.lastError) {
		r.lastError = start
	}
	if r.kinds == nil {
		r.kinds = map[string]int{}
	}
	r.kinds[errorKind(err)]++
	if debugEvents {
		fmt.Printf("%s %v: %v\n", time.Now().Format("15:04:05.000"), start.Format("15:04:05.000"), err)
	}
	if !documented(err, r.replicas) && len(r.strange) < 10 {
		r.strange = append(r.strange, err)
	}
}

func (r *eventRun) succeeded() {
	r.mu.Lock()
	r.successes = append(r.successes, time.Now())
	r.mu.Unlock()
}

// load runs callers on s until stop closes: each takes a unit, holds it
// a moment, and gives it back, counting what it holds beside the server.
func (r *eventRun) load(s eventSubject, callers int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				start := time.Now()
				give, ok, err := s.take(ctx, c == 0 && i%2 == 1)
				switch {
				case err != nil && s.refused(err):
				case err != nil:
					r.failed(start, err)
				case ok:
					n := r.inUse.Add(1)
					for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
					}
					time.Sleep(time.Millisecond)
					r.inUse.Add(-1)
					err := give(ctx)
					// A caller told ErrOutcomeUnknown calls again, as the
					// docs say, until it knows; the call sent again finds
					// nothing held if the first freed it.
					for try := 0; errors.Is(err, slotlimit.ErrOutcomeUnknown) && try < 3; try++ {
						r.failed(start, err)
						again, cancel := context.WithTimeout(context.Background(), 2*time.Second)
						err = give(again)
						cancel()
						if notHeld(err) {
							err = nil
						}
					}
					if err != nil {
						r.failed(start, err)
					} else {
						r.succeeded()
					}
				}
				cancel()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return &wg
}

// recovery is how long after changed calls begun kept failing: the time
// from changed to the beginning of the last call that failed, 0 when none
// began after it.
func (r *eventRun) recovery(changed time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.lastError.Sub(changed), 0)
}

// firstSuccess is how long after t the first call that succeeded after t
// ended, or -1 if none did.
func (r *eventRun) firstSuccess(t time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.successes {
		if s.After(t) {
			return s.Sub(t)
		}
	}
	return -1
}

// succeededAfter reports whether a call succeeded after t.
func (r *eventRun) succeededAfter(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.successes) > 0 && r.successes[len(r.successes)-1].After(t)
}

// clusterEventFigures collects each event's recovery time, for the log
// at the end of the test (see docs/operating.md).
var clusterEventFigures struct {
	sync.Mutex
	lines []string
}

// Every primitive, with and without Replicas, keeps its promises while
// its Cluster changes under load: a manual failover, a forced takeover of
// a master that stopped answering, and its slot moved to another master
// key by key. Callers never hold more than the limit at once (one lock
// owner), every error is one the docs name, calls succeed again soon
// after the change (the time is logged, and bounded only against gross
// failure here), and when the load ends the server holds no unit beyond
// what calls told of an error may have left to lapse.
func TestClusterEvents(t *testing.T) {
	c := redistest.OwnCluster(t)
	events := []struct {
		name string
		run  func(t *testing.T, key string) (resume func())
		// stays says the stopped master stays stopped until the load
		// ends; with Replicas, no write could then be acknowledged, so
		// it runs without.
		stays bool
	}{
		{"failover", func(t *testing.T, key string) func() { return c.Failover(t, key, false) }, false},
		{"takeover", func(t *testing.T, key string) func() { return c.Failover(t, key, true) }, false},
		{"takeover, master still stopped", func(t *testing.T, key string) func() { return c.Failover(t, key, true) }, true},
		{"move slot", func(t *testing.T, key string) func() { c.MoveSlot(t, key, 20*time.Millisecond); return func() {} }, false},
	}
	for _, event := range events {
		for _, replicas := range []int{0, 1} {
			if event.stays && replicas > 0 {
				continue
			}
			for _, name := range []string{"limiter", "lock", "adaptive"} {
				t.Run(fmt.Sprintf("%s/replicas=%d/%s", event.name, replicas, name), func(t *testing.T) {
					tag := strings.NewReplacer(" ", "-", "/", "-", "=", "", ",", "").Replace(t.Name())
					// As the README has it: a ctx deadline cuts a call to a
					// stalled server short.
					client := c.Client(t, func(o *redis.ClusterOptions) { o.ContextTimeoutEnabled = true })
					s := eventSubjects(t, client, replicas, tag)[name]
					key := "event:" + tag + ":" + name // each primitive's keys share its Key's slot
					runClusterEvent(t, s, replicas, strings.HasPrefix(event.name, "takeover") && replicas == 0, event.stays, func() func() { return event.run(t, key) })
				})
			}
		}
	}
	t.Cleanup(func() {
		clusterEventFigures.Lock()
		defer clusterEventFigures.Unlock()
		sort.Strings(clusterEventFigures.lines)
		t.Logf("after each change ended:\n%s", strings.Join(clusterEventFigures.lines, "\n"))
	})
}

// runClusterEvent runs load on s, then event, then load again for a
// while, and checks what callers saw.
//
// lossy says the event may lose writes the master acknowledged: a forced
// takeover, without Replicas. A take may then be lost, and more callers
// than the limit hold at once for a moment; and a release may be lost,
// and its lease stays held until it lapses, which is all that is checked
// of it.
//
// stays says a master the event stopped stays stopped until the load
// ends.
func runClusterEvent(t *testing.T, s eventSubject, replicas int, lossy, stays bool, event func() (resume func())) {
	run := eventRun{replicas: replicas}
	stop := make(chan struct{})
	wg := run.load(s, 6, stop)
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	require.Eventually(t, func() bool { return run.succeededAfter(time.Time{}) }, 10*time.Second, time.Millisecond, "calls succeed before the event")
	resume := event()
	if !stays {
		resume() // a stopped master comes back, to rejoin as a replica
	}
	changed := time.Now()
	if debugEvents {
		fmt.Println("changed", changed.Format("15:04:05.000"))
	}
	// Calls must succeed again; then let them run a while longer.
	require.Eventually(t, func() bool { return run.succeededAfter(changed) }, 20*time.Second, 5*time.Millisecond, "calls succeed again after the change")
	time.Sleep(time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for run.recovery(changed) > 0 && time.Since(changed.Add(run.recovery(changed))) < time.Second && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the last error is recent: calls have not settled yet
	}
	close(stop)
	wg.Wait()
	resume()

	recovery := run.recovery(changed)
	clusterEventFigures.Lock()
	clusterEventFigures.lines = append(clusterEventFigures.lines, fmt.Sprintf("  %s: first success after %v, calls begun after it failing for %v (errors: %v)", t.Name(),
		run.firstSuccess(changed).Round(time.Millisecond), recovery.Round(time.Millisecond), run.kinds))
	clusterEventFigures.Unlock()
	if lossy {
		// The writes the old master acknowledged last may be lost, and a
		// take lost that way lets another caller in beside its holder, as
		// docs/operating.md says; Replicas is what prevents it.
		t.Logf("most held at once: %d of %d", run.most.Load(), s.limit)
	} else {
		assert.LessOrEqual(t, run.most.Load(), s.limit, "callers held more than the limit at once")
	}
	assert.Empty(t, run.strange, "errors the docs do not name")
	assert.Less(t, recovery, 15*time.Second, "calls kept failing long after the change")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var held int64
	require.Eventually(t, func() bool {
		var err error
		held, err = s.held(ctx)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	if !lossy {
		assert.LessOrEqual(t, held, int64(run.told), "units still held on the server that no error told of")
		return
	}
	t.Logf("%d units held on the server after the load ended, %d calls told of an error", held, run.told)
	assert.Eventually(t, func() bool {
		held, err := s.held(ctx)
		return err == nil && held == 0
	}, 10*time.Second, 50*time.Millisecond, "units held beyond their lease")
}

// A client whose view of the slots is old, from before a failover or a
// slot's move that it did not see, follows the Cluster on its first call:
// every primitive, with and without Replicas, succeeds at once.
func TestClusterClientWithOldSlotMap(t *testing.T) {
	c := redistest.OwnCluster(t)
	for _, change := range []string{"failover", "move slot"} {
		for _, replicas := range []int{0, 1} {
			for _, name := range []string{"limiter", "lock", "adaptive"} {
				t.Run(fmt.Sprintf("%s/replicas=%d/%s", change, replicas, name), func(t *testing.T) {
					tag := strings.NewReplacer(" ", "-", "/", "-", "=", "").Replace(t.Name())
					old := c.Client(t)
					s := eventSubjects(t, old, replicas, tag)[name]
					key := "event:" + tag + ":" + name // each primitive's keys share its Key's slot
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					give, ok, err := s.take(ctx, false)
					require.NoError(t, err)
					require.True(t, ok)
					require.NoError(t, give(ctx), "the client has read the slots")

					if change == "failover" {
						c.Failover(t, key, false)
					} else {
						c.MoveSlot(t, key, 0)
					}
					// A replica must be back for WAIT to count it.
					if replicas > 0 {
						master, _ := c.Shard(t, key)
						awaitReplica(t, master)
					}
					give, ok, err = s.take(ctx, false)
					require.NoError(t, err, "the first call after the change")
					require.True(t, ok)
					require.NoError(t, give(ctx))
				})
			}
		}
	}
}

// awaitReplica waits until master has a replica online.
func awaitReplica(t *testing.T, master *redistest.Server) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer client.Close()
	require.Eventually(t, func() bool {
		info, err := client.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "state=online")
	}, 30*time.Second, 10*time.Millisecond, "a replica of %s comes online", master.Addr)
}

// A release that meets its slot in the middle of a move, its keys split
// between two masters (TRYAGAIN) or moved already (ASK), is not dropped:
// it is tried again until the move ends, or followed to the new master,
// and frees what it held.
func TestReleaseDuringSlotMove(t *testing.T) {
	c := redistest.OwnCluster(t)
	for _, replicas := range []int{0, 1} {
		for _, name := range []string{"limiter", "lock", "adaptive"} {
			t.Run(fmt.Sprintf("replicas=%d/%s", replicas, name), func(t *testing.T) {
				tag := strings.NewReplacer("/", "-", "=", "").Replace(t.Name())
				s := eventSubjects(t, c.Client(t), replicas, tag)[name]
				key := "event:" + tag + ":" + name
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var gives []func(context.Context) error
				for range s.limit {
					give, ok, err := s.take(ctx, false)
					require.NoError(t, err)
					require.True(t, ok)
					gives = append(gives, give)
				}

				move := c.BeginMove(t, key)
				move.MoveKeys(t, 1)
				errs := make(chan error, len(gives))
				for _, give := range gives {
					go func() { errs <- give(ctx) }()
				}
				time.Sleep(200 * time.Millisecond) // the releases meet the move
				early := len(errs)
				move.Finish(t)
				for range gives {
					require.NoError(t, <-errs)
				}
				held, err := s.held(ctx)
				require.NoError(t, err)
				assert.Zero(t, held, "every release freed its unit")
				t.Logf("%d of %d releases returned before the move ended", early, len(gives))
			})
		}
	}
}
