package adaptive_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// New refuses every Config it cannot work with, naming the field, with
// ErrInvalidConfig; neither New nor a refused Config sends anything.
// (The conformance suite checks the nil clients.)
func TestNewRefusesBadConfigAndSendsNothing(t *testing.T) {
	b := redistest.Redis(t)
	client := redis.NewClient(&redis.Options{Addr: b.Opts.Addrs[0]})
	defer client.Close()
	hook := &redistest.CommandCounter{}
	client.AddHook(hook)
	ok := adaptive.Config{Key: "k", Min: 2, Max: 10, Initial: 5}
	bad := []struct {
		field  string
		change func(c *adaptive.Config)
	}{
		{"Key", func(c *adaptive.Config) { c.Key = "" }},
		{"Key", func(c *adaptive.Config) { c.Key = "a}b" }},
		{"Key", func(c *adaptive.Config) { c.Key = "{k}/adaptive" }},
		{"Key", func(c *adaptive.Config) { c.Key = "{k}:adaptive:leases" }},
		{"Key", func(c *adaptive.Config) { c.Key = "{k}/recent" }},
		{"Key", func(c *adaptive.Config) { c.Key = "{k}/lock:q" }},
		{"Min", func(c *adaptive.Config) { c.Min = -1 }},
		{"Max", func(c *adaptive.Config) { c.Max = 0 }},
		{"Max", func(c *adaptive.Config) { c.Max = 1 }},
		{"Max", func(c *adaptive.Config) { c.Max = 1 << 26 }},
		{"Initial", func(c *adaptive.Config) { c.Initial = 1 }},
		{"Initial", func(c *adaptive.Config) { c.Initial = 11 }},
		{"Initial", func(c *adaptive.Config) { c.Initial = -1 }},
		{"TTL", func(c *adaptive.Config) { c.TTL = -time.Second }},
		{"TTL", func(c *adaptive.Config) { c.TTL = time.Microsecond }},
		{"TTL", func(c *adaptive.Config) { c.TTL = 25 * time.Hour }},
		{"Window", func(c *adaptive.Config) { c.Window = -time.Second }},
		{"Window", func(c *adaptive.Config) { c.Window = time.Microsecond }},
		{"Step", func(c *adaptive.Config) { c.Step = -1 }},
		{"Step", func(c *adaptive.Config) { c.Step = 11 }},
		{"Factor", func(c *adaptive.Config) { c.Factor = 1 }},
		{"Factor", func(c *adaptive.Config) { c.Factor = -0.5 }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = 0.5 }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = 0.999 }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = -1 }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = math.NaN() }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = math.Inf(1) }},
		{"RTTTolerance", func(c *adaptive.Config) { c.RTTTolerance = adaptive.MaxRTTTolerance + 1 }},
	}
	for i, x := range bad {
		cfg := ok
		x.change(&cfg)
		l, err := adaptive.New(client, cfg)
		assert.ErrorIs(t, err, adaptive.ErrInvalidConfig, "step %d: %s", i, x.field)
		assert.ErrorContains(t, err, x.field, "step %d", i)
		assert.Nil(t, l, "step %d", i)
	}

	l, err := adaptive.New(client, adaptive.Config{Key: "k", Max: 5})
	require.NoError(t, err)
	got := l.Config()
	assert.Equal(t, adaptive.Config{Key: "k", Min: 1, Max: 5, Initial: 1, TTL: adaptive.DefaultTTL,
		Window: adaptive.DefaultWindow, Step: adaptive.DefaultStep, Factor: adaptive.DefaultFactor}, got, "the defaults")
	assert.Equal(t, `"k" adaptive limit 1..5 (from 1), +1 or ×0.9 per 50ms, 30s leases`, got.String())
	assert.Zero(t, hook.Commands(), "New sends nothing")
	assert.Zero(t, hook.Dials(), "New connects to nothing")
}

// A refused TryAcquire is a known outcome, and leaves the slots held as
// they were; Config of a nil or zero Limiter is the zero Config, and a
// zero Slot has no ID. (The conformance suite checks the nil contexts and
// the nil and zero values' calls.)
func TestRefusalAndZeroValues(t *testing.T) {
	b := redistest.Miniredis(t)
	ctx := context.Background()
	l, _ := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 1})
	s := take(t, l, 1)[0]
	_, err := l.TryAcquire(ctx)
	assert.ErrorIs(t, err, adaptive.ErrLimited)
	assert.NotErrorIs(t, err, adaptive.ErrOutcomeUnknown)
	require.NoError(t, s.Success(ctx), "the slot is still held after the refused call")

	for name, zero := range map[string]*adaptive.Limiter{"nil": nil, "zero": {}} {
		assert.Zero(t, zero.Config(), name)
	}
	var zeroSlot adaptive.Slot
	assert.Empty(t, zeroSlot.ID())
}

// ErrOutcomeUnknown is the module's one value, and a call to a Redis that
// is down fails with an error that matches it or not as its outcome is
// known: a dial that failed sent nothing.
func TestOutcomeUnknownIsTheModulesOne(t *testing.T) {
	assert.Equal(t, slotlimit.ErrOutcomeUnknown, adaptive.ErrOutcomeUnknown)
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer client.Close()
	l := newLimiterOn(t, client, adaptive.Config{Key: "down", Max: 5})
	_, err := l.TryAcquire(context.Background())
	require.Error(t, err)
	assert.NotErrorIs(t, err, adaptive.ErrOutcomeUnknown, "a failed dial sent nothing")
	assert.ErrorContains(t, err, `adaptive: try acquire "down"`)
}

// Every key of one limit lives in one Redis Cluster hash slot, beside the
// key and named for the package, and none at the key itself.
func TestKeysShareOneHashSlot(t *testing.T) {
	for _, key := range []string{"payments", "{tenant}:payments"} {
		keys, channel := adaptive.Keys(key)
		tag := "{" + key + "}/adaptive"
		if key[0] == '{' {
			tag = key + ":adaptive"
		}
		assert.Equal(t, tag, keys[0], key)
		for _, k := range append(keys, channel) {
			assert.Contains(t, k, tag, key)
			assert.NotEqual(t, key, k)
		}
	}
	b := redistest.RedisCluster(t)
	l, key := newLimiter(t, b, adaptive.Config{Min: 1, Max: 5, Initial: 2})
	s := take(t, l, 1)[0]
	keys, _ := adaptive.Keys(key)
	slot := b.Client.ClusterKeySlot(context.Background(), keys[0]).Val()
	for _, k := range keys[1:] {
		assert.Equal(t, slot, b.Client.ClusterKeySlot(context.Background(), k).Val(), k)
	}
	require.NoError(t, s.Success(context.Background()))
}
