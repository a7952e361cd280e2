package redpacket_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/observe/observetest"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/observe"
	"github.com/slotlimit/slotlimit/redpacket"
)

// Concurrent Grabs of one packet, made through one Store, share one
// script call: these tests hold a Grab's script call on its way to Redis
// (a gate), so that the Grabs made meanwhile queue up behind it and go
// together when it returns, and check that each caller gets what its
// Grab alone, in turn, would have got.

// A gate is a hook on a client that holds the script calls naming a key,
// when told to, and records how many users each grab script call carries.
type gate struct {
	key     string
	held    chan struct{} // a value for each call held
	open    chan struct{} // a value lets one held call through
	mu      sync.Mutex
	hold    int   // the next this-many calls naming key are held
	members []int // users per script call naming key, in order
}

// newGate returns a gate on client for the calls naming key.
func newGate(client redis.UniversalClient, key string) *gate {
	g := &gate{key: key, held: make(chan struct{}, 16), open: make(chan struct{}, 16)}
	client.AddHook(g)
	return g
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		g.see(cmd)
		return next(ctx, cmd)
	}
}

// A Store with Replicas sends its scripts in pipelines, with WAIT.
func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			g.see(cmd)
		}
		return next(ctx, cmds)
	}
}

// see records cmd when it is a script call naming g's key, and holds it
// if g is told to.
func (g *gate) see(cmd redis.Cmder) {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	if (name != "evalsha" && name != "eval") || len(args) < 7 || args[3] != g.key {
		return
	}
	g.mu.Lock()
	g.members = append(g.members, len(args)-7) // evalsha, sha, 3, three keys, the packet id
	hold := g.hold > 0
	if hold {
		g.hold--
	}
	g.mu.Unlock()
	if hold {
		g.held <- struct{}{}
		<-g.open
	}
}

// Hold makes g hold the next n script calls naming its key.
func (g *gate) Hold(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold = n
}

// AwaitHeld waits for g to hold a call.
func (g *gate) AwaitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(30 * time.Second):
		t.Fatal("no script call was held")
	}
}

// Release lets one held call through.
func (g *gate) Release() { g.open <- struct{}{} }

// Members returns the users each script call naming g's key carried.
func (g *gate) Members() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.members...)
}

// Batched reports whether a script call carried more than one user.
func (g *gate) Batched() bool {
	for _, n := range g.Members() {
		if n > 1 {
			return true
		}
	}
	return false
}

// awaitQueued waits until n Grabs of packet id on s are queued behind a
// leader whose call a gate holds.
func awaitQueued(t *testing.T, s *redpacket.Store, id string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); redpacket.Queued(s, id) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d Grabs queued, want %d", redpacket.Queued(s, id), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// An answer is what one Grab returned.
type answer struct {
	user  string
	claim redpacket.Claim
	err   error
}

// crowd grabs packet id for first, holds that Grab's script call at g
// until a Grab for each of users is queued behind it, and returns the
// answers: first's, then the users', in order.
func crowd(t *testing.T, s *redpacket.Store, g *gate, id, first string, users []string) []answer {
	t.Helper()
	ctx := context.Background()
	answers := make([]answer, 1+len(users))
	var wg sync.WaitGroup
	grab := func(i int, user string) {
		defer wg.Done()
		c, err := s.Grab(ctx, id, user)
		answers[i] = answer{user, c, err}
	}
	g.Hold(1)
	wg.Add(1)
	go grab(0, first)
	g.AwaitHeld(t)
	for i, user := range users {
		wg.Add(1)
		go grab(1+i, user)
	}
	awaitQueued(t, s, id, len(users))
	g.Release()
	wg.Wait()
	return answers
}

// checkCrowd checks answers, each of a Grab of a packet of count shares
// summing to total, against what Grabs in turn, in some order, would
// answer: each user who got a share holds one, the users' claims take
// seqs 1 to count and sum to total once the packet is sold out, a user
// who stands twice got the same answer both times, and every other Grab
// found the packet sold out. It returns the claims by user.
func checkCrowd(t *testing.T, s *redpacket.Store, id string, count int, total int64, answers []answer) map[string]redpacket.Claim {
	t.Helper()
	claims := map[string]redpacket.Claim{}
	refused := map[string]bool{}
	for _, a := range answers {
		if a.err != nil {
			require.ErrorIs(t, a.err, redpacket.ErrSoldOut, "user %s", a.user)
			assert.NotContains(t, claims, a.user, "user %s: a share, then sold out", a.user)
			refused[a.user] = true
			continue
		}
		assert.False(t, refused[a.user], "user %s: sold out, then a share", a.user)
		if c, ok := claims[a.user]; ok {
			assert.Equal(t, c, a.claim, "user %s: the same claim again", a.user)
		}
		claims[a.user] = a.claim
	}
	require.Len(t, claims, count, "every share taken, one a user")
	seqs := map[int]bool{}
	var sum int64
	for _, c := range claims {
		seqs[c.Seq] = true
		sum += c.Amount
		assert.GreaterOrEqual(t, c.Amount, int64(1))
	}
	for seq := 1; seq <= count; seq++ {
		assert.True(t, seqs[seq], "seq %d", seq)
	}
	assert.Equal(t, total, sum)

	snap, err := s.Inspect(context.Background(), id)
	require.NoError(t, err)
	assert.Zero(t, snap.SharesLeft)
	assert.Zero(t, snap.AmountLeft)
	require.Len(t, snap.Claims, count)
	for _, c := range snap.Claims {
		want := claims[c.User]
		assert.True(t, want.At.Equal(c.At), "user %s: at", c.User)
		want.At = c.At
		assert.Equal(t, want, c, "user %s: the packet holds the claim returned", c.User)
	}
	return claims
}

// A crowd on one packet, queued behind one Grab in flight, goes as one
// script call, and each caller gets what Grabs in turn would answer: a
// user who holds a claim gets it back (first, again), the shares left go
// to the new users one each, the users after the last share find the
// packet sold out, and a user who stands twice gets one answer twice.
// Each caller's Observer event is its own. The one log entry of the
// batch's claims reaches the database as one row each.
func TestCrowdIsAnsweredAsGrabsInTurn(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		rec := &observetest.Recorder{}
		client := b.NewClient(t)
		s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-crowd:"), Observer: rec})
		require.NoError(t, err)
		p := redpacket.Packet{ID: "crowd", Total: 1000, Count: 5}
		require.NoError(t, s.Create(ctx, p))
		g := newGate(client, keyOf(s, "p", p.ID))
		answers := crowd(t, s, g, p.ID, "first", []string{"a", "b", "c", "d", "e", "f", "a", "first", "g"})
		require.True(t, g.Batched(), "a script call carried more than one user: %v", g.Members())
		claims := checkCrowd(t, s, p.ID, p.Count, p.Total, answers)
		assert.Equal(t, 1, claims["first"].Seq, "the Grab held took the first share")

		events := rec.Take()
		require.Len(t, events, 1+len(answers), "Create, and one event a Grab")
		byUser := map[string][]observe.Event{}
		for _, e := range events[1:] {
			assert.Equal(t, "Grab", e.Op)
			assert.Equal(t, p.ID, e.Key)
			byUser[e.Holder] = append(byUser[e.Holder], e)
		}
		for _, a := range answers {
			require.NotEmpty(t, byUser[a.user], "user %s", a.user)
			e := byUser[a.user][0]
			byUser[a.user] = byUser[a.user][1:]
			if a.err != nil {
				assert.Equal(t, observe.Refused, e.Kind, "user %s", a.user)
			} else {
				assert.Equal(t, observe.Acquired, e.Kind, "user %s", a.user)
				assert.Equal(t, int64(a.claim.Seq), e.InUse, "user %s", a.user)
			}
		}

		db := sqltest.Database{Name: "sqlite", DB: sqltest.SQLite(t)}
		per := newPersister(t, s, db, redpacket.PersisterConfig{})
		_, err = per.Drain(ctx)
		require.NoError(t, err)
		assertPersisted(t, per, db, p.ID, claims)
	})
}

// A crowd on a packet that is missing, or expired, is refused as each
// Grab in turn would be: ErrNotFound for every one; ErrExpired for every
// user but one who holds a claim, who gets it back.
func TestCrowdRefusedAsGrabsInTurn(t *testing.T) {
	ctx := context.Background()
	b := redistest.Miniredis(t)
	client := b.NewClient(t)
	s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-crowd:")})
	require.NoError(t, err)

	g := newGate(client, keyOf(s, "p", "missing"))
	for _, a := range crowd(t, s, g, "missing", "first", []string{"a", "b", "a"}) {
		assert.ErrorIs(t, a.err, redpacket.ErrNotFound, "user %s", a.user)
	}
	assert.True(t, g.Batched(), "%v", g.Members())

	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "late", Total: 100, Count: 10, TTL: time.Second}))
	early, err := s.Grab(ctx, "late", "early")
	require.NoError(t, err)
	b.Advance(time.Second)
	g = newGate(client, keyOf(s, "p", "late"))
	for _, a := range crowd(t, s, g, "late", "first", []string{"a", "early", "b", "early"}) {
		if a.user == "early" {
			assert.NoError(t, a.err)
			assert.Equal(t, early, a.claim)
		} else {
			assert.ErrorIs(t, a.err, redpacket.ErrExpired, "user %s", a.user)
		}
	}
	assert.True(t, g.Batched(), "%v", g.Members())
	left, _, err := s.Remaining(ctx, "late")
	require.NoError(t, err)
	assert.Equal(t, 9, left, "nothing taken once expired")
}

// A batch whose reply is lost is sent again by go-redis, and its second
// run answers each member as the first did: every claim once, no share
// taken twice, the users refused refused again, each claim logged once.
func TestBatchSentTwiceAnswersAsItsFirstRun(t *testing.T) {
	redistest.EachCutBackend(t, redpacket.LoadScripts, func(t *testing.T, b *redistest.Backend, client redis.UniversalClient, cutter *redistest.ReplyCutter) {
		ctx := context.Background()
		cfg := redpacket.Config{Prefix: b.Key(t, "rp-cutcrowd:")}
		s, err := redpacket.New(client, cfg)
		require.NoError(t, err)
		p := redpacket.Packet{ID: "resent", Total: 500, Count: 5, Split: redpacket.Random}
		require.NoError(t, s.Create(ctx, p))
		g := newGate(client, keyOf(s, "p", p.ID))
		before := cutter.Cuts()
		cutter.Arm(1, "evalsha", redpacket.GrabsHash())
		answers := crowd(t, s, g, p.ID, "first", []string{"a", "b", "c", "d", "e", "f", "b"})
		cutter.RequireOneMore(t, before)
		batches := 0
		for _, n := range g.Members() {
			if n > 1 {
				batches++
			}
		}
		assert.Equal(t, 2, batches, "the batch, run twice: %v", g.Members())
		claims := checkCrowd(t, s, p.ID, p.Count, p.Total, answers)

		msgs, err := b.Client.XRange(ctx, keyOf(s, "log", ""), "-", "+").Result()
		require.NoError(t, err)
		logged := map[string]int{}
		for _, m := range msgs {
			if u, ok := m.Values["u"].(string); ok {
				for _, user := range strings.Split(u, "\x00") { // k=b: the users, joined by NULs
					logged[user]++
				}
			}
		}
		want := map[string]int{}
		for user := range claims {
			want[user] = 1
		}
		assert.Equal(t, want, logged, "each claim logged once")
	})
}

// A Grab whose ctx ends while it is queued leaves the queue: its error
// matches the ctx's, its outcome is known, and it takes no share. One
// whose ctx ends while its batch is in flight returns at once, its
// outcome unknown; Grab again returns the claim the batch took.
func TestGrabContextEndsInACrowd(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	client := b.NewClient(t)
	s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-ctx:")})
	require.NoError(t, err)
	p := redpacket.Packet{ID: "ctx", Total: 100, Count: 10}
	require.NoError(t, s.Create(ctx, p))
	g := newGate(client, keyOf(s, "p", p.ID))

	grab := func(ctx context.Context, user string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			c, err := s.Grab(ctx, p.ID, user)
			ch <- answer{user, c, err}
		}()
		return ch
	}
	g.Hold(2) // the lone Grab, then the batch behind it
	first := grab(ctx, "first")
	g.AwaitHeld(t)
	queuedCtx, cancelQueued := context.WithCancel(ctx)
	queued := grab(queuedCtx, "queued")
	awaitQueued(t, s, p.ID, 1)
	other := grab(ctx, "other") // leads the batch, after queued leaves
	awaitQueued(t, s, p.ID, 2)
	inFlightCtx, cancelInFlight := context.WithCancel(ctx)
	defer cancelInFlight()
	inFlight := grab(inFlightCtx, "in-flight")
	awaitQueued(t, s, p.ID, 3)

	cancelQueued()
	a := <-queued
	require.ErrorIs(t, a.err, context.Canceled)
	assert.NotErrorIs(t, a.err, redpacket.ErrOutcomeUnknown, "nothing was sent")
	assert.ErrorContains(t, a.err, `redpacket: grab "ctx": `)

	g.Release() // the lone Grab; the batch of in-flight and other goes next
	require.NoError(t, (<-first).err)
	g.AwaitHeld(t)
	cancelInFlight()
	a = <-inFlight
	require.ErrorIs(t, a.err, context.Canceled)
	assert.ErrorIs(t, a.err, redpacket.ErrOutcomeUnknown, "the batch was sent")
	g.Release()
	o := <-other
	require.NoError(t, o.err)
	assert.Equal(t, []int{1, 2}, g.Members(), "the lone Grab, then in-flight and other together")

	again, err := s.Grab(ctx, p.ID, "in-flight")
	require.NoError(t, err)
	assert.ElementsMatch(t, []int{2, 3}, []int{again.Seq, o.claim.Seq}, "the batch took a share for in-flight")
	snap, err := s.Inspect(ctx, p.ID)
	require.NoError(t, err)
	for _, c := range snap.Claims {
		assert.NotEqual(t, "queued", c.User, "the Grab that left the queue took nothing")
	}
	assert.Len(t, snap.Claims, 3)
}

// A Grab with an argument no Grab could work with is refused before it
// queues: it returns while a Grab of the same packet is in flight, and
// the Grabs queued behind that one are answered as ever.
func TestBadGrabNeverQueues(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	client := b.NewClient(t)
	s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-bad:")})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "bad", Total: 100, Count: 10}))
	g := newGate(client, keyOf(s, "p", "bad"))
	g.Hold(1)
	done := make(chan error, 1)
	go func() {
		_, err := s.Grab(ctx, "bad", "first")
		done <- err
	}()
	g.AwaitHeld(t)
	for _, user := range []string{"", "nul\x00", strings.Repeat("u", redpacket.MaxIDLen+1)} {
		_, err := s.Grab(ctx, "bad", user)
		assert.ErrorIs(t, err, redpacket.ErrInvalidArgument, "user %q, refused while a Grab is in flight", user)
	}
	g.Release()
	require.NoError(t, <-done)
	assert.Equal(t, []int{1}, g.Members(), "only the good Grab was sent")
}

// With DisableCoalescing, each Grab is its own script call, as grab.lua's:
// a Grab in flight holds up no other.
func TestDisableCoalescingSendsEachGrabAlone(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	client := b.NewClient(t)
	s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-alone:"), DisableCoalescing: true})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "alone", Total: 100, Count: 10}))
	g := newGate(client, keyOf(s, "p", "alone"))
	g.Hold(1)
	done := make(chan error, 1)
	go func() {
		_, err := s.Grab(ctx, "alone", "first")
		done <- err
	}()
	g.AwaitHeld(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.Grab(ctx, "alone", fmt.Sprint("u", i))
			assert.NoError(t, err)
			assert.Greater(t, c.Seq, 0)
		}()
	}
	wg.Wait() // while the first is held
	g.Release()
	require.NoError(t, <-done)
	assert.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, g.Members())
}

// A batch keeps the largest amounts exact: a packet of MaxTotal, taken by
// a crowd, gives shares that sum to it, and leaves 0 exactly.
func TestCrowdKeepsLargestAmountsExact(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		client := b.NewClient(t)
		s, err := redpacket.New(client, redpacket.Config{Prefix: b.Key(t, "rp-big:")})
		require.NoError(t, err)
		for _, split := range []redpacket.Split{redpacket.Random, redpacket.Equal} {
			p := redpacket.Packet{ID: "big-" + split.String(), Total: redpacket.MaxTotal, Count: 4, Split: split}
			require.NoError(t, s.Create(ctx, p))
			g := newGate(client, keyOf(s, "p", p.ID))
			answers := crowd(t, s, g, p.ID, "first", []string{"a", "b", "c"})
			require.True(t, g.Batched(), "%v", g.Members())
			checkCrowd(t, s, p.ID, p.Count, p.Total, answers)
		}
	})
}
