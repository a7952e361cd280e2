package conformance

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// keysOf returns the keys of client's server whose names hold key: the
// key itself and the names a package keeps beside it.
func keysOf(ctx context.Context, t *testing.T, client redis.UniversalClient, key string) []string {
	t.Helper()
	var keys []string
	iter := client.Scan(ctx, 0, "*"+key+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err(), "scan for %q", key)
	sort.Strings(keys)
	return keys
}

// contents returns the value of each key of key (see keysOf), read by
// its type, by its name with key replaced by "K".
func contents(t *testing.T, client redis.UniversalClient, key string) map[string]string {
	t.Helper()
	return read(t, client, key, false, func(ctx context.Context, k, typ string) string {
		var v any
		var err error
		switch typ {
		case "string":
			v, err = client.Get(ctx, k).Result()
		case "list":
			v, err = client.LRange(ctx, k, 0, -1).Result()
		case "set":
			v, err = client.SMembers(ctx, k).Result()
		case "zset":
			v, err = client.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "hash":
			v, err = client.HGetAll(ctx, k).Result()
		case "stream":
			v, err = client.XRange(ctx, k, "-", "+").Result()
		}
		require.NoError(t, err, "read %s", k)
		return typ + " " + fmt.Sprint(v)
	})
}

// shape returns the type and size of each key of key: a string's value
// when it is a small count, else its length; the number of members of
// any other type; by the name with key replaced by "K" and every ID in
// it by "ID". Two runs of the same calls on two keys have the same shape,
// though the IDs and times they hold differ.
func shape(t *testing.T, client redis.UniversalClient, key string) map[string]string {
	t.Helper()
	return read(t, client, key, true, func(ctx context.Context, k, typ string) string {
		var n int64
		var err error
		switch typ {
		case "string":
			var v string
			v, err = client.Get(ctx, k).Result()
			if _, isInt := strconv.Atoi(v); isInt == nil && len(v) <= 6 {
				return "string " + v
			}
			n = int64(len(v))
		case "list":
			n, err = client.LLen(ctx, k).Result()
		case "set":
			n, err = client.SCard(ctx, k).Result()
		case "zset":
			n, err = client.ZCard(ctx, k).Result()
		case "hash":
			n, err = client.HLen(ctx, k).Result()
		case "stream":
			n, err = client.XLen(ctx, k).Result()
		}
		require.NoError(t, err, "read %s", k)
		return typ + " of " + strconv.FormatInt(n, 10)
	})
}

// ids are the IDs a package mints and names keys by (a holder's, a
// release's, a lock's handle ID, 10 characters of base32 after
// "owner:"), which differ between two runs of the same calls.
var ids = regexp.MustCompile(`[A-Za-z0-9_-]{16,}|owner:[A-Z2-7]{10}$`)

// read returns what value says of each key of key, by the name with key
// replaced by "K", and every ID in it by "ID" when anonymous (the values
// of the names that then meet are joined, in order).
func read(t *testing.T, client redis.UniversalClient, key string, anonymous bool, value func(ctx context.Context, k, typ string) string) map[string]string {
	t.Helper()
	ctx := context.Background()
	values := map[string][]string{}
	for _, k := range keysOf(ctx, t, client, key) {
		typ, err := client.Type(ctx, k).Result()
		require.NoError(t, err, "type of %s", k)
		if typ == "none" {
			continue // gone since the scan
		}
		name := strings.ReplaceAll(k, key, "K")
		if anonymous {
			name = ids.ReplaceAllString(name, "ID")
		}
		values[name] = append(values[name], value(ctx, k, typ))
	}
	out := map[string]string{}
	for name, vs := range values {
		sort.Strings(vs)
		out[name] = strings.Join(vs, "; ")
	}
	return out
}

// spoil replaces every key of key with a value of another type, as
// another package's data at the same names would be, and returns how
// many it replaced.
func spoil(t *testing.T, client redis.UniversalClient, key string) int {
	t.Helper()
	ctx := context.Background()
	keys := keysOf(ctx, t, client, key)
	for _, k := range keys {
		typ, err := client.Type(ctx, k).Result()
		require.NoError(t, err)
		require.NoError(t, client.Del(ctx, k).Err())
		if typ == "list" {
			require.NoError(t, client.Set(ctx, k, "another package's", 0).Err())
		} else {
			require.NoError(t, client.RPush(ctx, k, "another package's").Err())
		}
	}
	return len(keys)
}
