package delayqueue

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadScripts caches every script of the package on each master of client.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range []*redis.Script{pushScript.Script, pollScript.Script, pollsScript.Script, leaveScript.Script, ackScript.Script, acksScript.Script,
			nackScript.Script, extendScript.Script, lenScript.Script, deadScript.Script, requeueScript.Script, dropScript.Script} {
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

// ScriptHash returns the SHA1 of the script of the named operation, as
// EVALSHA sends it, so that a test can lose the reply to that one.
func ScriptHash(op string) string {
	return map[string]string{
		"push": pushScript.Hash(), "poll": pollScript.Hash(), "polls": pollsScript.Hash(), "leave": leaveScript.Hash(),
		"ack": ackScript.Hash(), "acks": acksScript.Hash(), "nack": nackScript.Hash(), "extend": extendScript.Hash(),
		"requeue": requeueScript.Hash(), "drop": dropScript.Hash(),
	}[op]
}
