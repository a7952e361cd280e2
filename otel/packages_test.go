package slotlimitotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/observe"
)

// The Observer records the events of every primitive, by the package and
// operation each event names, Done included: one call and one span per
// final event, a refusal, an error and a lost lease where they happen.
func TestObserverCoversEveryPrimitive(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	start := time.Now()
	event := func(kind observe.Kind, pkg, op string) observe.Event {
		return observe.Event{Kind: kind, Package: pkg, Op: op, Key: "k", InUse: -1, Start: start, Duration: time.Millisecond}
	}
	lost := errors.New("write failed")
	events := []observe.Event{
		event(observe.Acquired, "slotlimit", "TryAcquire"),
		event(observe.Acquired, "lock", "TryLock"),
		event(observe.Refused, "ratelimit", "Allow"),
		event(observe.Acquired, "ratelimit", "Allow"),
		event(observe.Done, "delayqueue", "Push"),
		event(observe.Acquired, "delayqueue", "Poll"),
		event(observe.Released, "delayqueue", "Ack"),
		event(observe.Done, "redpacket", "Create"),
		event(observe.Acquired, "redpacket", "Grab"),
		event(observe.Refused, "redpacket", "Grab"),
		event(observe.Done, "recent", "Add"),
		event(observe.Error, "recent", "Add"),
		event(observe.LeaseLost, "delayqueue", ""),
	}
	events[6].Held = true
	events[11].Err = lost
	for _, e := range events {
		h.obs.Observe(ctx, e)
	}

	m := h.collect(t)
	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"):         1,
		set("package", "lock", "operation", "TryLock", "outcome", "acquired"):                 1,
		set("package", "ratelimit", "operation", "Allow", "outcome", "refused"):               1,
		set("package", "ratelimit", "operation", "Allow", "outcome", "acquired"):              1,
		set("package", "delayqueue", "operation", "Push", "outcome", "done"):                  1,
		set("package", "delayqueue", "operation", "Poll", "outcome", "acquired"):              1,
		set("package", "delayqueue", "operation", "Ack", "outcome", "released", "held", true): 1,
		set("package", "redpacket", "operation", "Create", "outcome", "done"):                 1,
		set("package", "redpacket", "operation", "Grab", "outcome", "acquired"):               1,
		set("package", "redpacket", "operation", "Grab", "outcome", "refused"):                1,
		set("package", "recent", "operation", "Add", "outcome", "done"):                       1,
		set("package", "recent", "operation", "Add", "outcome", "error"):                      1,
	}, m.sums(t, "slotlimit.calls", "{call}"))
	assert.Equal(t, map[string]int64{
		set("package", "ratelimit", "operation", "Allow"): 1,
		set("package", "redpacket", "operation", "Grab"):  1,
	}, m.sums(t, "slotlimit.refusals", "{call}"))
	assert.Equal(t, map[string]int64{
		set("package", "recent", "operation", "Add", "error.type", "_OTHER"): 1,
	}, m.sums(t, "slotlimit.errors", "{error}"))
	assert.Equal(t, map[string]int64{set("package", "delayqueue"): 1},
		m.sums(t, "slotlimit.leases.lost", "{lease}"))

	spans := names(h.spans.Ended())
	require.Len(t, spans, 12, "one span per final event")
	for _, want := range []string{"slotlimit.TryAcquire", "lock.TryLock", "ratelimit.Allow", "delayqueue.Push",
		"delayqueue.Poll", "delayqueue.Ack", "redpacket.Create", "redpacket.Grab", "recent.Add"} {
		assert.Contains(t, spans, want)
	}
}

// A Counter reports to the Observer too.
func TestObserverRecordsACounter(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	client, _ := newRedis(t)
	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: "count:1", Limit: 1, Observer: h.obs})
	require.NoError(t, err)
	_, err = c.TryAcquire(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Release(ctx))
	require.ErrorIs(t, c.Release(ctx), slotlimit.ErrNotHeld)

	assert.Equal(t, map[string]int64{
		set("package", "slotlimit", "operation", "TryAcquire", "outcome", "acquired"):             1,
		set("package", "slotlimit", "operation", "Release", "outcome", "released", "held", true):  1,
		set("package", "slotlimit", "operation", "Release", "outcome", "released", "held", false): 1,
	}, h.collect(t).sums(t, "slotlimit.calls", "{call}"))
}
