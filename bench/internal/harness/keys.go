package harness

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// MemoryUsage returns MEMORY USAGE (SAMPLES 0) summed over keys, counting
// a key that does not exist as 0 bytes.
func MemoryUsage(ctx context.Context, admin *redis.Client, keys ...string) (int64, error) {
	var total int64
	for _, key := range keys {
		n, err := admin.MemoryUsage(ctx, key, 0).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// CountKeys returns the number of keys matching pattern, by SCAN.
func CountKeys(ctx context.Context, admin *redis.Client, pattern string) (int64, error) {
	var n int64
	iter := admin.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}
