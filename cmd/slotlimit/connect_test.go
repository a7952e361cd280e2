package main

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With neither -u nor REDIS_URL, the command talks to localhost:6379, as
// redis-cli does, alone or as a node of a Cluster. connect sends nothing,
// so no server is needed, and none that may listen there is touched.
func TestNoURLMeansLocalhost6379(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		c := &cli{cluster: cluster}
		require.NoError(t, c.connect())
		assert.Equal(t, "localhost:6379", c.addr, "cluster=%v", cluster)
		if cluster {
			assert.IsType(t, &redis.ClusterClient{}, c.client)
		} else {
			assert.IsType(t, &redis.Client{}, c.client)
		}
		require.NoError(t, c.client.Close())
	}
	// A URL given still wins.
	c := &cli{url: "127.0.0.1:6380"}
	require.NoError(t, c.connect())
	assert.Equal(t, "127.0.0.1:6380", c.addr)
	require.NoError(t, c.client.Close())
}
