package redpacket

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Every script's reply but grab.lua's, which stays bare for its cost,
// begins with a status, as the module's replies do: grabs.lua's too, the
// bare replies of its users after it.
func TestRepliesBeginWithAStatus(t *testing.T) {
	ctx := context.Background()
	b := redistest.Redis(t)
	run := script.Runner{Client: b.Client}
	sh := shard("{" + b.Key(t, "rp-scripts:") + ":0}")
	require.NoError(t, b.Client.XGroupCreateMkStream(ctx, sh.log(), "g", "0").Err())
	grabKeys := []string{sh.packet("p"), sh.shares("p"), sh.log()}
	for name, cmd := range map[string]*redis.Cmd{
		"ack.lua":   run.Run(ctx, ackScript, []string{sh.log()}, "g", "0-1"),
		"sync.lua":  run.Run(ctx, syncScript, []string{sh.sync()}),
		"grabs.lua": run.Run(ctx, grabsScript, grabKeys, "p", "a", "b"),
	} {
		v, err := cmd.Result()
		require.NoError(t, err, name)
		r := kernel.ReadReply(v)
		assert.NoError(t, r.Err(), name)
		assert.Equal(t, int64(1), r.Status(), name)
	}
}
