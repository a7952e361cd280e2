package adaptive

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A run of acquire.lua or release.lua for many holders answers each, and
// leaves the data, exactly as runs for one holder each, made in turn at
// the same moment, do. Two limits of one miniredis, whose clock stands
// still between moves, get the same calls: one in runs, the other alone.
// First a case random runs rarely meet (a hand-off in a run empties the
// queue, then a success in the same run finds no waiter), then random
// runs of tries (taking, refused, joining the queue, sent again) and of
// releases (of each outcome, of slots held, lapsed, freed already, of
// waiters leaving the queue, with grants known or not). With an
// RTTTolerance, the latency estimate too.
func TestRunAnswersAsCallsInTurn(t *testing.T) {
	for _, tolerance := range []float64{0, 1.5} {
		t.Run(fmt.Sprint("RTTTolerance ", tolerance), func(t *testing.T) { runAnswersAsCallsInTurn(t, tolerance) })
	}
}

func runAnswersAsCallsInTurn(t *testing.T, tolerance float64) {
	b := redistest.Miniredis(t)
	c := newTurns(t, b, tolerance)
	grants := func(tries ...try) []grant {
		return c.tries(tries)
	}
	for i := range 5 {
		grants(try{holder: fmt.Sprint("early", i)})
	}
	b.Advance(100 * time.Millisecond)
	grants(try{holder: "late"}, try{holder: "waiter", join: true})
	b.Advance(150 * time.Millisecond) // the early slots lapse
	g := grants(try{holder: "taker"})
	late := c.granted["late"]
	c.releases([]release{
		{holder: "late", outcome: outcomeIgnore, granted: late.now, known: late.deadline},
		{holder: "taker", outcome: outcomeSuccess, granted: g[0].now, known: g[0].deadline},
	})

	if tolerance > 0 { // a run whose first success ends a window past the tolerance, and cuts the limit
		success := func(holders ...string) {
			var rs []release
			for _, h := range holders {
				g := c.granted[h]
				rs = append(rs, release{holder: h, outcome: outcomeSuccess, granted: g.now, known: g.deadline})
			}
			c.releases(rs)
		}
		grants(try{holder: "fast0"}, try{holder: "fast1"}, try{holder: "fast2"})
		b.Advance(30 * time.Millisecond)
		success("fast0", "fast1")
		grants(try{holder: "slow0"}, try{holder: "slow1"})
		b.Advance(150 * time.Millisecond)
		success("slow0", "fast2", "slow1")
		limit, err := c.runs.Limit(context.Background())
		require.NoError(t, err)
		require.Less(t, limit, int64(6), "the latency cut the limit")
	}

	rng := rand.New(rand.NewPCG(1, 2))
	var holders []string
	pick := func() string {
		if len(holders) == 0 || rng.IntN(4) == 0 {
			holders = append(holders, fmt.Sprintf("h%d", len(holders)))
			return holders[len(holders)-1]
		}
		return holders[rng.IntN(len(holders))]
	}
	for range 300 {
		n := 1 + rng.IntN(10)
		if rng.IntN(2) == 0 {
			tries := make([]try, n)
			for i := range tries {
				tries[i] = try{holder: pick(), join: rng.IntN(2) == 0}
			}
			c.tries(tries)
		} else {
			releases := make([]release, n)
			for i := range releases {
				h := pick()
				r := release{holder: h, outcome: []string{outcomeSuccess, outcomeDropped, outcomeIgnore}[rng.IntN(3)]}
				if g, ok := c.granted[h]; ok && rng.IntN(4) > 0 {
					r.granted, r.known = g.now, g.deadline
				}
				releases[i] = r
			}
			c.releases(releases)
		}
		b.Advance(time.Duration(rng.IntN(25)) * time.Millisecond)
	}
}

// turns runs the same calls on two limits, in runs and alone, and checks
// that they answer alike and leave the same data.
type turns struct {
	t       *testing.T
	runs    *Limiter // runs for many holders
	alone   *Limiter // runs for one holder each
	step    int
	granted map[string]grant // the last grant of each holder, with its time known
}

func newTurns(t *testing.T, b *redistest.Backend, tolerance float64) *turns {
	cfg := Config{Min: 1, Max: 12, Initial: 6, Window: 10 * time.Millisecond, TTL: 200 * time.Millisecond, RTTTolerance: tolerance}
	var limits [2]*Limiter
	for i := range limits {
		cfg.Key = b.Key(t, fmt.Sprintf("turns-%d:", i))
		l, err := New(b.Client, cfg)
		require.NoError(t, err)
		limits[i] = l
	}
	return &turns{t: t, runs: limits[0], alone: limits[1], granted: map[string]grant{}}
}

func (c *turns) tries(tries []try) []grant {
	ctx := context.Background()
	c.step++
	run, err := c.runs.runTries(ctx, tries)
	require.NoError(c.t, err)
	for i, tr := range tries {
		alone, err := c.alone.runTries(ctx, []try{tr})
		require.NoError(c.t, err)
		require.Equal(c.t, alone[0], run[i], "step %d: try %d of %d, %+v", c.step, i, len(tries), tr)
		if run[i].held && run[i].now != 0 {
			c.granted[tr.holder] = run[i]
		}
	}
	c.sameData()
	return run
}

func (c *turns) releases(releases []release) {
	ctx := context.Background()
	c.step++
	run, err := c.runs.runReleases(ctx, &c.runs.base.Runner, releases)
	require.NoError(c.t, err)
	for i, r := range releases {
		alone, err := c.alone.runReleases(ctx, &c.alone.base.Runner, []release{r})
		require.NoError(c.t, err)
		require.Equal(c.t, alone[0], run[i], "step %d: release %d of %d, %+v", c.step, i, len(releases), r)
	}
	c.sameData()
}

// sameData checks that both limits hold the same data: every key, as
// text, with its time to live.
func (c *turns) sameData() {
	c.t.Helper()
	require.Equal(c.t, dataOf(c.t, c.alone), dataOf(c.t, c.runs), "step %d: the data", c.step)
}

func dataOf(t *testing.T, l *Limiter) []string {
	t.Helper()
	ctx := context.Background()
	client := l.base.Client
	var out []string
	for i, key := range l.keys {
		var v any
		var err error
		switch i {
		case keyState, keyQueueWants:
			v, err = client.HGetAll(ctx, key).Result()
		default:
			v, err = client.ZRangeWithScores(ctx, key, 0, -1).Result()
		}
		require.NoError(t, err)
		ttl, err := client.PTTL(ctx, key).Result()
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%d: %v, ttl %v", i, v, ttl))
	}
	return out
}
