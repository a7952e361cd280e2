package script_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Tries made again for a Cluster's state (TRYAGAIN here) do not use up
// the client's MaxRetries, which bounds the tries made again after
// LOADING, READONLY, MASTERDOWN or a failed connection.
func TestClusterStateLeavesTheRetriesOfLoading(t *testing.T) {
	f := startFakeServer(t,
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
		"-LOADING Redis is loading the dataset in memory\r\n",
		":1\r\n",
	)
	client := redis.NewClient(&redis.Options{Addr: f.ln.Addr().String()}) // MaxRetries: the default, 3
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := &script.Runner{Client: client}
	s := script.New("return 1")

	start := time.Now()
	n, err := r.Run(ctx, s, []string{"k"}).Int64()
	f.mu.Lock()
	evals := f.evals
	f.mu.Unlock()
	t.Logf("Run: %v, %v after %d tries in %v, ctx left: %v", n, err, evals, time.Since(start).Round(time.Millisecond), ctx.Err() == nil)
	require.NoError(t, err, "one LOADING, the first of its kind, is within MaxRetries (3)")
	require.Equal(t, int64(1), n)
}

// Without a deadline, a call tries again after CLUSTERDOWN for a while,
// then returns the reply, which says the call wrote nothing; with one,
// it tries again until the deadline.
func TestClusterStateTriedForAWhile(t *testing.T) {
	defer script.SetClusterPatience(300 * time.Millisecond)()
	f := startFakeServer(t)
	f.forever = "-CLUSTERDOWN The cluster is down\r\n"
	client := redis.NewClient(&redis.Options{Addr: f.ln.Addr().String()})
	defer client.Close()
	r := &script.Runner{Client: client}
	s := script.New("return 1")

	for _, deadline := range []bool{false, true} {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if deadline {
			ctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
		}
		f.mu.Lock()
		f.evals = 0
		f.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx, s, []string{"k"}).Err() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("deadline %v: Run still tries after 20 s", deadline)
		}
		past := callerr.ContextDone(ctx) != nil
		cancel()
		f.mu.Lock()
		evals := f.evals
		f.mu.Unlock()
		require.Greater(t, evals, 1, "deadline %v: tried again", deadline)
		if deadline && past && !strings.Contains(err.Error(), "CLUSTERDOWN") {
			// On a loaded machine the deadline can come while a try is
			// on the wire: the call then ends with that try's timeout.
			var netErr net.Error
			require.True(t, errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout(), "deadline: %v", err)
			continue
		}
		require.ErrorContains(t, err, "CLUSTERDOWN", "deadline %v", deadline)
		require.False(t, callerr.OutcomeUnknown(err), "deadline %v: no try wrote", deadline)
	}
}
