package slotlimit_test

// Fault tests across processes: the test binary runs itself again as child
// processes that hold slots on the parent's Redis. A child is the same
// binary, run with -test.run naming one test and procChildEnv set to that
// test's role; the test function sees the variable and acts as the child.
// Children get their server's addresses and key through the environment and
// never start a server of their own. They talk to the parent in lines on
// stdout, and end by themselves when their stdin closes (the parent died)
// or after a hard time limit.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// The environment a child reads, beside redistest's.
const (
	procKeyEnv   = "SLOTLIMIT_CHILD_KEY"   // the Limiter's key
	procLimitEnv = "SLOTLIMIT_CHILD_LIMIT" // the Limiter's limit
	procArgEnv   = "SLOTLIMIT_CHILD_ARG"   // a role's own argument
	procIndexEnv = "SLOTLIMIT_CHILD_INDEX" // which child this is, from 0
	procSoakEnv  = "SLOTLIMIT_SOAK"        // "1": run the long variants
)

// Lines a child prints to stdout for its parent.
const (
	procReadyLine  = "slotlimit-child: ready"
	procReportLine = "slotlimit-child-report: "
)

// procChildEnv is the variable that names a child's role.
const procChildEnv = redistest.ChildRoleEnv

// procTarget is a Redis for children.
type procTarget = redistest.Target

func procTargetOf(b *backend) procTarget {
	_, cluster := b.Client.(*redis.ClusterClient)
	return procTarget{Addrs: b.Opts.Addrs, Cluster: cluster}
}

// startProcChild runs the test binary again as a child playing role in
// test, on target's Redis, with the Limiter's key and limit, its index and
// arg. The child is killed when t ends.
func startProcChild(t *testing.T, test, role string, index int, target procTarget, key string, limit int64, arg string) *redistest.Child {
	t.Helper()
	return redistest.StartChild(t, target, test, role,
		procKeyEnv+"="+key,
		procLimitEnv+"="+strconv.FormatInt(limit, 10),
		procArgEnv+"="+arg,
		procIndexEnv+"="+strconv.Itoa(index),
	)
}

// procChildSetup reads a child's environment, connects to its parent's
// Redis, and returns a context that ends when the parent closes the child's
// stdin (or dies) or when redistest.ChildLimit has passed.
func procChildSetup(t *testing.T) (ctx context.Context, client redis.UniversalClient, key string, limit int64, arg string, index int) {
	key = os.Getenv(procKeyEnv)
	limit, err := strconv.ParseInt(os.Getenv(procLimitEnv), 10, 64)
	require.NoError(t, err)
	index, err = strconv.Atoi(os.Getenv(procIndexEnv))
	require.NoError(t, err)
	arg = os.Getenv(procArgEnv)
	const pool = 128 // every goroutine of a child has a connection
	ctx, client = redistest.ChildSetup(t, pool)
	return ctx, client, key, limit, arg, index
}

// Killed holders: 4 child processes hold 5 slots each under 2 s leases that
// they renew every 500 ms, so they would hold them for ever, and are killed
// with SIGKILL. Every slot they held is free within the lease time plus a
// second, and the parent's own holders keep theirs throughout.
func TestProcessKilledHoldersFreeTheirSlots(t *testing.T) {
	if os.Getenv(procChildEnv) == "killed-holder" {
		killedHolderChild(t)
		return
	}
	t.Run("redis", func(t *testing.T) { testKilledHolders(t, newRealRedis(t)) })
	t.Run("cluster", func(t *testing.T) { testKilledHolders(t, newRedisCluster(t)) })
}

const (
	killedChildren   = 4
	killedPerChild   = 5
	killedOwnHolders = 5
	killedChildTTL   = 2 * time.Second
	killedRenewEvery = 500 * time.Millisecond
)

func testKilledHolders(t *testing.T, b *backend) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := testKey(t, b)
	limit := int64(killedChildren*killedPerChild + killedOwnHolders)

	// The parent's holders, under long leases.
	own := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: limit, TTL: time.Minute})
	ownIDs := map[string]bool{}
	for i := 0; i < killedOwnHolders; i++ {
		id := fmt.Sprintf("parent-%d", i)
		res, err := own.TryAcquire(ctx, id)
		require.NoError(t, err)
		require.True(t, res.Acquired, "parent holder %s", id)
		ownIDs[id] = true
	}

	// The children take every other slot.
	childIDs := map[string]bool{}
	children := make([]*redistest.Child, killedChildren)
	for i := range children {
		ids := make([]string, killedPerChild)
		for j := range ids {
			ids[j] = fmt.Sprintf("child-%d-%d", i, j)
			childIDs[ids[j]] = true
		}
		children[i] = startProcChild(t, "TestProcessKilledHoldersFreeTheirSlots", "killed-holder", i,
			procTargetOf(b), key, limit, strings.Join(ids, ","))
	}
	for _, c := range children {
		c.Await(t, procReadyLine, 30*time.Second)
	}
	held := map[string]bool{}
	for _, id := range holderIDs(t, own) {
		held[id] = true
	}
	for id := range childIDs {
		require.True(t, held[id], "child holder %s holds a slot", id)
	}
	n, err := own.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, limit, n, "every slot is taken")
	res, err := own.TryAcquire(ctx, "newcomer")
	require.NoError(t, err)
	require.False(t, res.Acquired, "no slot is free while the children live")

	killedAt := time.Now()
	for _, c := range children {
		require.NoError(t, c.Cmd.Process.Kill())
	}
	for _, c := range children {
		err := c.Wait(t, 10*time.Second)
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "child was killed: %v", err)
	}

	// Poll until the children's leases are gone, checking that the
	// parent's holders stay.
	deadline := killedAt.Add(killedChildTTL + time.Second)
	var freedAfter time.Duration
	for polls := 0; ; polls++ {
		hs, err := own.Holders(ctx)
		require.NoError(t, err)
		left := 0
		present := map[string]bool{}
		for _, h := range hs {
			present[h.ID] = true
			if childIDs[h.ID] {
				left++
			} else {
				require.True(t, ownIDs[h.ID], "unexpected holder %s", h.ID)
			}
		}
		for id := range ownIDs {
			require.True(t, present[id], "parent holder %s keeps its slot", id)
		}
		if left == 0 {
			freedAfter = time.Since(killedAt)
			break
		}
		require.True(t, time.Now().Before(deadline) && polls < 1000,
			"%d child slots still held %v after the kill (lease %v)", left, time.Since(killedAt), killedChildTTL)
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the killed children's slots were free %v after the kill (lease %v)", freedAfter.Round(time.Millisecond), killedChildTTL)

	n, err = own.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(killedOwnHolders), n, "only the parent's slots are held")

	// The freed slots can be taken again, and no more than them.
	for i := 0; i < killedChildren*killedPerChild; i++ {
		res, err := own.TryAcquire(ctx, fmt.Sprintf("after-%d", i))
		require.NoError(t, err)
		require.True(t, res.Acquired, "freed slot %d can be taken", i)
	}
	res, err = own.TryAcquire(ctx, "one-too-many")
	require.NoError(t, err)
	assert.False(t, res.Acquired, "the limit still holds")
	assert.Subset(t, holderIDs(t, own), procKeysOf(ownIDs), "the parent's holders are still there")
}

func procKeysOf(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// killedHolderChild takes a slot for each holder ID it is given, tells its
// parent, and renews them until it is killed, its stdin closes, or its
// time is up.
func killedHolderChild(t *testing.T) {
	ctx, client, key, limit, arg, _ := procChildSetup(t)
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: killedChildTTL})
	require.NoError(t, err)
	ids := strings.Split(arg, ",")
	for _, id := range ids {
		res, err := l.TryAcquire(ctx, id)
		require.NoError(t, err)
		require.True(t, res.Acquired, "child holder %s", id)
	}
	fmt.Println(procReadyLine)
	ticker := time.NewTicker(killedRenewEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return // the parent is gone, or the time is up
		case <-ticker.C:
		}
		for _, id := range ids {
			rctx, cancel := context.WithTimeout(ctx, killedRenewEvery)
			err := l.Renew(rctx, id)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				fmt.Printf("slotlimit-child: renew %s: %v\n", id, err)
			}
		}
	}
}

// Multi-process invariant: 4 processes of 100 goroutines each share a limit
// of 60. Each goroutine acquires (waiting 50 to 300 ms a try), INCRs a
// gauge key in Redis, checks the value INCR returned, holds a moment,
// DECRs the gauge and releases. The value is never above 60, and at the end
// Count and the gauge are both 0. It runs about 4 s, or 10 s with
// SLOTLIMIT_SOAK=1.
func TestProcessInvariant(t *testing.T) {
	if os.Getenv(procChildEnv) == "invariant" {
		invariantChild(t)
		return
	}
	t.Run("redis", func(t *testing.T) { testProcessInvariant(t, newRealRedis(t)) })
	t.Run("cluster", func(t *testing.T) { testProcessInvariant(t, newRedisCluster(t)) })
}

const (
	invariantProcs     = 4
	invariantWorkers   = 100 // per process
	invariantLimit     = 60
	invariantTTL       = 30 * time.Second      // no lease lapses while held
	invariantTry       = 50 * time.Millisecond // plus up to 5 times as much
	invariantHold      = 5 * time.Millisecond  // plus up to as much again
	invariantMaxRounds = 100000                // per worker, a bound besides the time
)

// invariantReport is what an invariant child tells its parent.
type invariantReport struct {
	Acquired   int64  // guarded sections entered
	Timeouts   int64  // tries whose 50-300 ms ran out first
	Errors     int64  // any other failure
	FirstError string `json:",omitempty"`
	Violations int64  // INCRs that returned more than the limit
	MaxGauge   int64  // the highest value INCR returned
}

func testProcessInvariant(t *testing.T, b *backend) {
	runFor := 4 * time.Second
	if os.Getenv(procSoakEnv) == "1" {
		runFor = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), runFor+2*time.Minute)
	defer cancel()
	key := testKey(t, b)
	gaugeKey := key + ":gauge"
	t.Cleanup(func() { b.Client.Del(context.Background(), gaugeKey) })
	l := newLimiterOn(t, b.Client, slotlimit.Config{Key: key, Limit: invariantLimit, TTL: invariantTTL})

	children := make([]*redistest.Child, invariantProcs)
	for i := range children {
		children[i] = startProcChild(t, "TestProcessInvariant", "invariant", i,
			procTargetOf(b), key, invariantLimit, gaugeKey+","+runFor.String())
	}
	var total invariantReport
	for i, c := range children {
		line := c.Await(t, procReportLine, runFor+time.Minute)
		var r invariantReport
		require.NoError(t, json.Unmarshal([]byte(line), &r), "child %d report %q", i, line)
		t.Logf("child %d: %+v", i, r)
		assert.NoError(t, c.Wait(t, 30*time.Second), "child %d exits cleanly\n%s", i, c.Transcript())
		assert.Zero(t, r.Violations, "child %d: INCR never returned more than %d; it returned %d", i, invariantLimit, r.MaxGauge)
		assert.Zero(t, r.Errors, "child %d: no errors besides timeouts; first: %s", i, r.FirstError)
		assert.Positive(t, r.Acquired, "child %d did work", i)
		total.Acquired += r.Acquired
		total.Timeouts += r.Timeouts
		total.MaxGauge = max(total.MaxGauge, r.MaxGauge)
	}
	t.Logf("in all: acquired %d, timed out %d, gauge peak %d of %d", total.Acquired, total.Timeouts, total.MaxGauge, invariantLimit)
	assert.LessOrEqual(t, total.MaxGauge, int64(invariantLimit))
	if total.MaxGauge <= invariantLimit/2 {
		// Not a failure: a machine too busy to crowd the section tests
		// the limit less, not wrongly.
		t.Logf("the section was never crowded: at most %d of %d inside", total.MaxGauge, invariantLimit)
	}

	n, err := l.Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "every slot is back")
	g, err := b.Client.Get(ctx, gaugeKey).Int64()
	if !errors.Is(err, redis.Nil) {
		require.NoError(t, err)
	}
	assert.Zero(t, g, "everyone left the guarded section")
}

// invariantChild runs invariantWorkers goroutines through the guarded
// section for the time it is given and prints its report.
func invariantChild(t *testing.T) {
	ctx, client, key, limit, arg, index := procChildSetup(t)
	gaugeKey, runForText, _ := strings.Cut(arg, ",")
	runFor, err := time.ParseDuration(runForText)
	require.NoError(t, err)
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: limit, TTL: invariantTTL})
	require.NoError(t, err)

	var (
		acquired, timeouts, errs, violations, peak atomic.Int64
		firstErr                                   atomic.Pointer[string]
		wg                                         sync.WaitGroup
		stop                                       = time.Now().Add(runFor)
	)
	fail := func(what string, err error) {
		errs.Add(1)
		msg := fmt.Sprintf("%s: %v", what, err)
		firstErr.CompareAndSwap(nil, &msg)
	}
	// A Redis call that must not fail, and is not bounded by the short ctx.
	sure := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	}
	for w := 0; w < invariantWorkers; w++ {
		wg.Add(1)
		go func(holder string) {
			defer wg.Done()
			for r := 0; r < invariantMaxRounds && time.Now().Before(stop) && ctx.Err() == nil; r++ {
				tctx, cancel := context.WithTimeout(ctx, invariantTry+rand.N(5*invariantTry))
				res, err := l.Acquire(tctx, holder)
				cancel()
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						timeouts.Add(1)
					} else if ctx.Err() == nil {
						fail("acquire", err)
					}
					continue
				}
				if !res.Acquired {
					fail("acquire", errors.New("returned without a slot"))
					continue
				}
				acquired.Add(1)
				acquiredAt := time.Now()

				sctx, cancel := sure()
				v, err := client.Incr(sctx, gaugeKey).Result()
				if err != nil {
					fail("incr", err)
				} else {
					if v > limit {
						violations.Add(1)
					}
					for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
					}
					time.Sleep(invariantHold + rand.N(invariantHold))
					if err := client.Decr(sctx, gaugeKey).Err(); err != nil {
						fail("decr", err)
					}
				}
				err = l.Release(sctx, holder)
				cancel()
				if err != nil && !errors.Is(err, slotlimit.ErrNotHeld) {
					fail("release", err)
				} else if err != nil {
					// Lost while held: say how, by the server's clock.
					now, _ := client.Time(context.WithoutCancel(ctx)).Result()
					fail("release", fmt.Errorf("%s's lease was not live %v after Acquire returned; its deadline was %v after that, %v ago by the server's clock",
						holder, time.Since(acquiredAt), res.ExpiresAt.Sub(acquiredAt), now.Sub(res.ExpiresAt)))
				}
			}
		}(fmt.Sprintf("proc-%d-worker-%d", index, w))
	}
	wg.Wait()

	report := invariantReport{
		Acquired:   acquired.Load(),
		Timeouts:   timeouts.Load(),
		Errors:     errs.Load(),
		Violations: violations.Load(),
		MaxGauge:   peak.Load(),
	}
	if p := firstErr.Load(); p != nil {
		report.FirstError = *p
	}
	line, err := json.Marshal(report)
	require.NoError(t, err)
	fmt.Println(procReportLine + string(line))
	assert.Zero(t, report.Violations, "INCR never returned more than the limit")
	assert.Zero(t, report.Errors, "no errors besides timeouts: %s", report.FirstError)
}
