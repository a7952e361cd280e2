package recent

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// RecordDueNow makes l's record of its bounds due at its next Add.
func RecordDueNow(l *List) { l.memo.Forget(l.keys[0] + boundsSuffix) }

// DataKey returns the Redis key that holds l's items.
func DataKey(l *List) string { return l.keys[keyList] }

// LoadScripts caches every script of the package on each master of
// client, so that a test that loses a reply loses a script's, never a
// NOSCRIPT answer.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range []*redis.Script{addScript.Script, itemsScript.Script, lenScript.Script, removeScript.Script, removeBatchScript.Script} {
			if err := s.Load(ctx, c).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if cluster, ok := client.(*redis.ClusterClient); ok {
		return cluster.ForEachMaster(ctx, load)
	}
	return load(ctx, client.(*redis.Client))
}

// Queued returns the Adds and the Removes of l queued behind a batch in
// flight.
func Queued(l *List) int { return l.adds.Queued(struct{}{}) + l.removes.Queued(struct{}{}) }
