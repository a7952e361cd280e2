package slotlimit_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
)

// scriptKeys returns a hook that records the KEYS of every script call,
// and the notice channel among its arguments: on Cluster it must share the
// keys' slot too.
func scriptKeys(calls *[][]string) hook {
	return func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		if scriptOp(cmd) != "" {
			args := cmd.Args()
			n, _ := strconv.Atoi(fmt.Sprint(args[2]))
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprint(args[3+i])
			}
			for _, arg := range args[3+n:] {
				if s := fmt.Sprint(arg); strings.HasSuffix(s, "/free") || strings.HasSuffix(s, ":free") {
					keys = append(keys, s)
				}
			}
			*calls = append(*calls, keys)
		}
		return next(ctx, cmd)
	}
}

// hashSlot is the Redis Cluster slot of key: CRC16 of its hash tag, mod 16384.
func hashSlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

func TestHashSlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	assert.Equal(t, uint16(12739), hashSlot("123456789")) // CRC16 0x31C3
	assert.Equal(t, hashSlot("user"), hashSlot("{user}.following"))
	assert.Equal(t, hashSlot("foo{}{bar}"), hashSlot("foo{}{bar}"))
	assert.NotEqual(t, hashSlot("a"), hashSlot("b"))
}

// Every script a Limiter or Counter runs names keys of one hash slot, so it
// works on Redis Cluster without CROSSSLOT errors.
func TestAllKeysShareOneHashSlot(t *testing.T) {
	b := newMiniredis(t)
	var calls [][]string
	b.Client.AddHook(scriptKeys(&calls))
	ctx := context.Background()

	for _, key := range []string{"ar:0571", "{tenant-7}:ar:0571", "a{b", "{x}", "a{b}c{d}"} {
		calls = nil
		l, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
		require.NoError(t, err)
		fair, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute, Fair: true})
		require.NoError(t, err)
		fair.TryAcquireN(ctx, "d3", 2)
		fair.Release(ctx, "d3")
		l.TryAcquireN(ctx, "d1", 2)
		l.TryAcquire(ctx, "d2")
		l.Acquire(ctx, "d1")
		l.Renew(ctx, "d1")
		l.Count(ctx)
		l.Holders(ctx)
		l.Release(ctx, "d1")
		c, err := slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key + ":counter", Limit: 1})
		require.NoError(t, err)
		c.TryAcquire(ctx)
		c.Release(ctx)

		require.NotEmpty(t, calls, key)
		channels := 0
		for _, keys := range calls {
			require.NotEmpty(t, keys, "%s: scripts name their keys", key)
			if strings.HasSuffix(keys[len(keys)-1], "free") {
				channels++
			}
			for _, k := range keys {
				assert.Equal(t, hashSlot(keys[0]), hashSlot(k), "%s: %q and %q", key, keys[0], k)
			}
		}
		assert.Positive(t, channels, "%s: the notice channel was checked", key)
	}
}

// A key with a '}' but no hash tag has no slot its other keys could share:
// a Limiter's, or the records a Counter's Release keeps beside its key.
func TestNewRejectsKeyWithoutUsableHashSlot(t *testing.T) {
	b := newMiniredis(t)
	for _, key := range []string{"a}b{", "x{}y", "}"} {
		_, err := slotlimit.New(b.Client, slotlimit.Config{Key: key, Limit: 1})
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, key)
		_, err = slotlimit.NewCounter(b.Client, slotlimit.Config{Key: key, Limit: 1})
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig, key)
	}
}

// The keys beside "k" and beside "{k}" are apart, though both hash alike:
// their weights and queues never mix.
func TestTaggedAndUntaggedKeysKeepApart(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		key := testKey(t, b)
		plain := newLimiter(t, b, key, 5, time.Minute)
		tagged := newLimiter(t, b, "{"+key+"}", 5, time.Minute)
		t.Cleanup(func() { b.Client.Del(ctx, "{"+key+"}") })
		for _, l := range []*slotlimit.Limiter{plain, tagged} {
			res, err := l.TryAcquireN(ctx, "h", 3)
			require.NoError(t, err)
			assert.True(t, res.Acquired)
			assert.Equal(t, int64(3), res.Count)
		}
		for _, l := range []*slotlimit.Limiter{plain, tagged} {
			n, err := l.Count(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(3), n)
		}
	})
}
