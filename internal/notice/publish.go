package notice

import "github.com/redis/go-redis/v9"

// Command returns the command a script sends a notice on client's channels
// with: SPUBLISH on Redis Cluster, where a channel lives on the node of its
// hash slot and a Site subscribes with SSUBSCRIBE, and PUBLISH elsewhere.
func Command(client redis.UniversalClient) string {
	if _, ok := client.(*redis.ClusterClient); ok {
		return "spublish"
	}
	return "publish"
}
