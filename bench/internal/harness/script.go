package harness

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// A Script is a Lua script's text and SHA1, as EVALSHA names it: a
// baseline the benchmark runs without the library, such as a classic
// script.
type Script struct {
	Src string
	SHA string
}

// NewScript returns the Script of src.
func NewScript(src string) Script {
	sum := sha1.Sum([]byte(src))
	return Script{Src: src, SHA: hex.EncodeToString(sum[:])}
}

// Load loads the script into the server's script cache.
func (s Script) Load(ctx context.Context, c *redis.Client) error {
	return c.ScriptLoad(ctx, s.Src).Err()
}
