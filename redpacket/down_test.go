package redpacket_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// downClient returns a client of a port where nothing listens.
func downClient(t *testing.T) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	return client
}
