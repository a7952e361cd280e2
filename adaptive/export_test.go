package adaptive

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
)

// LoadScripts caches every script of the package on each master of client.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range []*redis.Script{acquireScript.Script, releaseScript.Script, claimScript.Script, inspectScript.Script} {
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

// Keys returns the names of the keys beside key, in the order the scripts
// take them (state, leases, queue, queue deadlines, queue wants), and the
// notice channel.
func Keys(key string) ([]string, string) {
	names, _ := hashtag.Names(key, sides...)
	return names[1 : 1+numKeys], names[1+numKeys]
}

// InspectReply returns inspect.lua's reply for l, as the server sent it.
func InspectReply(ctx context.Context, l *Limiter) ([]any, error) {
	return inspectScript.Run(ctx, l.base.Client, l.inspectKeys(), l.bounds).Slice()
}

// Queued returns the tries and the releases of l queued behind a run in
// flight.
func Queued(l *Limiter) int { return l.tries.Queued(struct{}{}) + l.releases.Queued(struct{}{}) }
