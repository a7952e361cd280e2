package ratelimit

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// BatchHashes are the SHA1s of the batch scripts, allow_gcra_batch.lua
// and allow_window_batch.lua, by which a test tells a batch's script call
// from a single call's.
var BatchHashes = []string{allowGCRABatchScript.Hash(), allowWindowBatchScript.Hash()}

// LoadScripts caches the scripts of Allow and AllowN, single and batch,
// on client's servers (on a Cluster, every master), so that a test that
// watches or cuts their calls meets each as one EVALSHA, never a NOSCRIPT.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	for _, s := range []interface {
		Load(context.Context, redis.Scripter) *redis.StringCmd
	}{allowGCRAScript, allowWindowScript, allowGCRABatchScript, allowWindowBatchScript} {
		if err := s.Load(ctx, client).Err(); err != nil {
			return err
		}
	}
	return nil
}

// AllowBatch runs the batch script of limit's algorithm once for calls
// calls of n events on key, as a batch of that many concurrent AllowN
// calls does, for a benchmark of the script's cost by batch size.
func (l *Limiter) AllowBatch(ctx context.Context, key string, limit Limit, n int64, calls int) ([]Result, error) {
	data, p, err := prepare(key, limit, n)
	if err != nil {
		return nil, err
	}
	return l.allowBatch(ctx, key, data, p, n, calls)
}

// RecordDueNow makes the rate record of key due on l, as a minute's
// passing would.
func RecordDueNow(l *Limiter, key string) { l.memo.Forget(recordKey(key)) }

// RecordKey is the name of the rate record beside key.
func RecordKey(key string) string { return recordKey(key) }

// Queued returns the AllowN calls of n events on key and limit that l has
// queued behind a batch in flight.
func Queued(l *Limiter, key string, limit Limit, n int64) int {
	data, p, err := prepare(key, limit, n)
	if err != nil {
		panic(err)
	}
	return l.allows.Queued(batchKey{key: key, data: data, p: p, n: n})
}
