//go:build unix

package redpacket_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// With Config.Replicas, a Create or Grab sent again answers only once the
// replicas have what its first run wrote, although the run sent again
// writes nothing new (WAIT counts the replicas that have the server's
// offset as of the connection's last command, read or write): with the
// replica stopped, connected but acking nothing, both fail with
// ErrNotReplicated, as their first runs would have, instead of returning
// at once.
func TestReplicatedCallSentAgainWaitsForTheReplicas(t *testing.T) {
	r := redistest.StartReplicated(t)
	b := &redistest.Backend{Name: "replicated", Client: r.Client, Opts: redis.UniversalOptions{Addrs: []string{r.Master.Addr}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, cutter, _ := cutStores(t, b, redpacket.Config{Replicas: 1, ReplicaTimeout: 300 * time.Millisecond})
	// The replica acks within ReplicaTimeout while it runs, but a busy
	// machine can make it late: the warm-up sends its calls again (each
	// takes effect once) until the replica has them.
	p := redpacket.Packet{ID: "p", Total: 100, Count: 4}
	var err error
	for range 20 {
		if err = s.Create(ctx, redpacket.Packet{ID: "warm", Total: 1, Count: 1}); err == nil {
			if _, err = s.Grab(ctx, "warm", "warm"); err == nil {
				err = s.Create(ctx, p)
			}
		}
		if !errors.Is(err, redpacket.ErrNotReplicated) {
			break
		}
	}
	require.NoError(t, err)

	info, err := r.ReplicaClient.Info(ctx, "server").Result()
	require.NoError(t, err)
	var pid int
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	require.Positive(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })

	cutter.Arm(1, "evalsha", keyOf(s, "p", p.ID))
	_, err = s.Grab(ctx, p.ID, "alice")
	assert.ErrorIs(t, err, redpacket.ErrNotReplicated, "the grab sent again")
	other := redpacket.Packet{ID: "q", Total: 100, Count: 4}
	cutter.Arm(1, "evalsha", keyOf(s, "p", other.ID))
	assert.ErrorIs(t, s.Create(ctx, other), redpacket.ErrNotReplicated, "the create sent again")
	assert.Equal(t, 2, cutter.Cuts())
}
