package redistest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A cut reply makes go-redis send the command again: an INCR then runs
// twice while its caller sees one call that succeeded.
func TestReplyCutterRunsACommandTwice(t *testing.T) {
	for _, b := range []*redistest.Backend{redistest.Redis(t), redistest.RedisCluster(t)} {
		ctx := context.Background()
		key := b.Key(t, "{cut}")
		client, cutter := b.CutClient(t)
		require.NoError(t, client.Ping(ctx).Err())
		cutter.Arm(1, "incr", key)
		n, err := client.Incr(ctx, key).Result()
		require.NoError(t, err, b.Name)
		assert.Equal(t, int64(2), n, "%s: the first INCR ran though its reply was lost", b.Name)
		assert.Equal(t, 1, cutter.Cuts(), b.Name)
		assert.False(t, cutter.Armed(), b.Name)

		cutter.Arm(10, "incr", key)
		_, err = client.Incr(ctx, key).Result()
		assert.Error(t, err, "%s: a reply lost on every try is an error", b.Name)
	}
	redistest.Shutdown()
}
