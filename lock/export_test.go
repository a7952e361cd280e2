package lock

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadScripts caches every script of the package on each master of client.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range allScripts() {
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

func allScripts() []*redis.Script {
	return []*redis.Script{obtainQueuedScript.Script, unlockScript.Script, handOffScript.Script, refreshScript.Script, claimScript.Script, inspectScript.Script}
}

// SideKey returns the name of the key beside the lock at key with suffix
// ("q", "qd", "qw"): its waiting queue.
func SideKey(key, suffix string) string {
	names, _ := keyNames(key)
	for i, s := range sides[:numKeys-keyQueue] {
		if s == sidePrefix+suffix {
			return names[keyQueue+i]
		}
	}
	panic("no side key " + suffix)
}

// OwnerKey returns the name of the owner record of the Mutex that made
// token, beside key, or "" for a token no Mutex made.
func OwnerKey(key, token string) string { return ownerKey(key, token) }

// OwnerDueNow makes m's owner record due, as a minute's passing would.
func OwnerDueNow(m *Mutex) { m.memo.Forget(m.ownerKey) }

// SetProcessSecret makes secret the random value that handle IDs hash, as
// in another process, and returns a func that restores the old one.
func SetProcessSecret(secret string) (restore func()) {
	old := processSecret
	processSecret = secret
	return func() { processSecret = old }
}
