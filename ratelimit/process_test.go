package ratelimit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// The environment a child reads, beside redistest's.
const (
	childKeyEnv   = "SLOTLIMIT_RL_KEY"   // the key
	childAlgoEnv  = "SLOTLIMIT_RL_ALGO"  // the Algorithm, as an int
	childStartEnv = "SLOTLIMIT_RL_START" // when to begin, Unix ns
)

const (
	loadChildren   = 4
	loadGoroutines = 50
	loadRun        = 1500 * time.Millisecond
	loadMaxCalls   = 5000 // per goroutine
	childDoneLine  = "rl-child-done: "
)

// The limits under load: GCRA 100 per second (10ms an event), bursts of
// 20; a fixed window of 50 per 250ms.
var loadLimits = map[ratelimit.Algorithm]ratelimit.Limit{
	ratelimit.GCRA:        {Rate: 100, Period: time.Second, Burst: 20},
	ratelimit.FixedWindow: {Rate: 50, Period: 250 * time.Millisecond, Algorithm: ratelimit.FixedWindow},
}

// An event is one allowed call: when it was sent and when its reply came,
// in Unix ns. The server decided between the two, on the same host's
// clock.
type event [2]int64

// 4 processes of 50 goroutines each call Allow on one key as fast as they
// can. Over the whole run, and in every stretch of one Period, the events
// allowed never exceed what the limit allows: for GCRA, Burst plus one
// per Period/Rate; for the fixed window, Rate per window (windows start at
// least a Period apart), and so at most 2×Rate in any stretch of a Period.
// An event counts in a stretch only if it was sent and answered inside it.
func TestLimitHoldsAcrossProcesses(t *testing.T) {
	if redistest.ChildRole() == "caller" {
		callerChild(t)
		return
	}
	for _, algo := range []ratelimit.Algorithm{ratelimit.GCRA, ratelimit.FixedWindow} {
		t.Run(algo.String(), func(t *testing.T) {
			for _, b := range realBackends(t) {
				t.Run(b.Name, func(t *testing.T) { loadAcrossProcesses(t, b, algo) })
			}
		})
	}
}

func loadAcrossProcesses(t *testing.T, b *redistest.Backend, algo ratelimit.Algorithm) {
	key := b.Key(t, "rl-test:")
	start := time.Now().Add(2 * time.Second) // once every child is up
	children := make([]*redistest.Child, loadChildren)
	for i := range children {
		children[i] = redistest.StartChild(t, b.Target(), "TestLimitHoldsAcrossProcesses", "caller",
			childKeyEnv+"="+key, childAlgoEnv+"="+strconv.Itoa(int(algo)), childStartEnv+"="+strconv.FormatInt(start.UnixNano(), 10))
	}
	var events []event
	var calls int
	for _, c := range children {
		var report struct {
			Calls, Errors int
			Events        []event
		}
		require.NoError(t, json.Unmarshal([]byte(c.Await(t, childDoneLine, 30*time.Second)), &report), c.Transcript())
		assert.Zero(t, report.Errors, c.Transcript())
		calls += report.Calls
		events = append(events, report.Events...)
	}
	require.NotEmpty(t, events)
	slices.SortFunc(events, func(a, b event) int { return int(a[0] - b[0]) })
	first, last := events[0][0], events[0][1]
	for _, e := range events {
		last = max(last, e[1])
	}
	limit := loadLimits[algo]
	span := time.Duration(last - first)
	var most, inPeriod int64 // over the run; in any stretch of a Period
	if algo == ratelimit.GCRA {
		cost := limit.Period / time.Duration(limit.Rate)
		most = limit.Burst + int64(span/cost)
		inPeriod = limit.Burst + limit.Rate
	} else {
		most = limit.Rate * (int64(span/limit.Period) + 1)
		inPeriod = 2 * limit.Rate
	}
	t.Logf("%d calls, %d allowed over %v (at most %d), %v", calls, len(events), span, most, limit)
	assert.LessOrEqual(t, int64(len(events)), most, "over the run")
	assert.Greater(t, int64(len(events)), most/2, "the callers kept the limit busy")
	assert.Greater(t, calls, 2*len(events), "and were refused")
	assert.LessOrEqual(t, mostInStretch(events, limit.Period), inPeriod, "in one Period")
}

// mostInStretch returns the most events sent and answered inside one
// stretch of time of length d, with events sorted by send time.
func mostInStretch(events []event, d time.Duration) int64 {
	var most int64
	for i, from := range events {
		var n int64
		for _, e := range events[i:] {
			if e[0] > from[0]+int64(d) {
				break
			}
			if e[1] <= from[0]+int64(d) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func callerChild(t *testing.T) {
	ctx, client := redistest.ChildSetup(t, loadGoroutines+8)
	algo, err := strconv.Atoi(os.Getenv(childAlgoEnv))
	require.NoError(t, err)
	startNs, err := strconv.ParseInt(os.Getenv(childStartEnv), 10, 64)
	require.NoError(t, err)
	key, limit := os.Getenv(childKeyEnv), loadLimits[ratelimit.Algorithm(algo)]
	limiter := newLimiter(t, client)
	time.Sleep(time.Until(time.Unix(0, startNs)))
	deadline := time.Now().Add(loadRun)
	var mu sync.Mutex
	var report struct {
		Calls, Errors int
		Events        []event
	}
	var wg sync.WaitGroup
	for range loadGoroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < loadMaxCalls && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				sent := time.Now().UnixNano()
				res, err := limiter.Allow(ctx, key, limit)
				answered := time.Now().UnixNano()
				mu.Lock()
				report.Calls++
				if err != nil {
					report.Errors++
				} else if res.Allowed {
					report.Events = append(report.Events, event{sent, answered})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out, err := json.Marshal(report)
	require.NoError(t, err)
	fmt.Printf("%s%s\n", childDoneLine, out)
}
