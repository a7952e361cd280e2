package slotlimit

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadClaimScript caches the script that claims a handed lease on client's
// server, so that a claim runs at its first EVALSHA.
func LoadClaimScript(ctx context.Context, client *redis.Client) error {
	return claimScript.Load(ctx, client).Err()
}
