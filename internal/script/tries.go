package script

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// A Runner sends every command once (see once) and makes its tries
// itself, so that it knows what each try did: go-redis's own retries
// would hide a try whose reply was lost behind the error of a later one.
//
// A try is made again when its error is mendable:
//   - a Cluster's redirect (MOVED, ASK) that go-redis did not follow, or
//     a slot in the middle of a move (TRYAGAIN, or a script refused a
//     key on the node the slot is moving to), or a Cluster that is
//     down for now (CLUSTERDOWN): again and again until ctx ends (for
//     clusterPatience, if ctx has no deadline), with a short pause, the
//     slots reloaded;
//   - a server loading its data, a replica it was sent to, a master that
//     lost its own (LOADING, READONLY, MASTERDOWN), or a connection that
//     failed: as often as the client's MaxRetries (a Cluster client's
//     MaxRedirects) allows, as go-redis does, with go-redis's pause
//     between tries.
//
// A try whose error is not mendable, and the last try, end the call.
type tries struct {
	n       int       // the tries made again so far, which sets the pause
	retries int       // those of them made again as retries (asRetries)
	first   time.Time // when the first try that met a Cluster's state failed
}

// How a try that failed may be made again.
type mend int

const (
	never     mend = iota // not at all
	untilDone             // until the call's context ends
	asRetries             // as often as the client's MaxRetries allows
)

// mendable says how a try that failed with err may be made again.
func mendable(err error) mend {
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		for _, prefix := range []string{"MOVED ", "ASK ", "TRYAGAIN ", "CLUSTERDOWN "} {
			if strings.HasPrefix(msg, prefix) {
				return untilDone
			}
		}
		// A script sent with ASKING to the node a slot is moving to can
		// find, at its first key, that the node will not serve it to a
		// script; it wrote nothing, since every key of a script shares the
		// slot, and it runs once the move ends.
		if strings.Contains(msg, "Script attempted to access a non local key") {
			return untilDone
		}
		for _, prefix := range []string{"LOADING ", "READONLY ", "MASTERDOWN "} {
			if strings.HasPrefix(msg, prefix) {
				return asRetries
			}
		}
		return never
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrClosed) {
		return never
	}
	return asRetries
}

// again reports whether a try that failed with err is made again, and
// waits before it (see tries). On a Cluster, after a redirect or a
// failed connection, it asks for the slots to be reloaded (go-redis does
// it in the background), so that a later try, or the next call, goes to
// the node that serves them now.
func (t *tries) again(ctx context.Context, client redis.UniversalClient, err error) bool {
	how := mendable(err)
	if cluster, ok := client.(*redis.ClusterClient); ok && (how != never || mayHaveWritten(err)) {
		// Even when this call ends here, the next one goes where the
		// Cluster serves the key now.
		cluster.ReloadState(ctx)
	}
	if how == never || callerr.ContextDone(ctx) != nil {
		return false
	}
	switch how {
	case asRetries:
		if t.retries >= maxRetries(client) {
			return false
		}
		t.retries++
	case untilDone:
		if t.first.IsZero() {
			t.first = time.Now()
		}
		if _, ok := ctx.Deadline(); !ok && time.Since(t.first) >= clusterPatience {
			return false
		}
	}
	t.n++
	pause := min(minPause<<min(t.n-1, 16), maxPause)
	if how == untilDone {
		pause = min(pause, maxClusterPause)
	}
	timer := time.NewTimer(pause/2 + rand.N(pause/2+1))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// clusterPatience bounds the tries made again for a Cluster's state when
// the call's context has no deadline: longer than a failover takes with
// a node timeout of a few seconds, so that a release outlives one.
var clusterPatience = 10 * time.Second

// The pauses between tries: go-redis's defaults, doubling from minPause
// to maxPause; a Cluster's moves and failovers pass in a moment, so
// tries that wait for them pause at most maxClusterPause.
const (
	minPause        = 8 * time.Millisecond
	maxPause        = 512 * time.Millisecond
	maxClusterPause = 50 * time.Millisecond
)

// maxRetries is how often go-redis would send a command again after a
// failed try: a client's MaxRetries, a Cluster client's MaxRedirects.
func maxRetries(client redis.UniversalClient) int {
	n := 3
	switch c := client.(type) {
	case *redis.Client:
		n = c.Options().MaxRetries
	case *redis.ClusterClient:
		n = c.Options().MaxRedirects
	case *redis.Ring:
		n = c.Options().MaxRetries
	}
	return max(n, 0)
}

// mayHaveWritten reports whether one try that failed with err may have
// written. A reply, even an error, comes from a run or a refusal it
// reports; a try that got no connection, or whose context ended before
// it had one (go-redis reports a context that ends during a read or a
// write as an i/o timeout), was not sent.
func mayHaveWritten(err error) bool {
	if err == nil || errors.As(err, new(redis.Error)) ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Op != "dial"
	}
	// context.DeadlineExceeded is a net.Error too: look for it first.
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// redirect reads a MOVED or ASK reply: which it is, and the address it
// names.
func redirect(err error) (moved, ask bool, addr string) {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false, false, ""
	}
	kind, rest, _ := strings.Cut(reply.Error(), " ")
	if kind != "MOVED" && kind != "ASK" {
		return false, false, ""
	}
	_, addr, _ = strings.Cut(rest, " ")
	return kind == "MOVED", kind == "ASK", addr
}

// once is a command that go-redis sends once, making no retry of its own
// (see tries). A go-redis hook sees it, not the *redis.Cmd it holds: its
// name, arguments, reply and error are the Cmd's. Holding one pointer, it
// is stored in a Cmder without an allocation.
type once struct{ *redis.Cmd }

func (once) NoRetry() bool { return true }

// onceInt is once for WAIT's IntCmd.
type onceInt struct{ *redis.IntCmd }

func (onceInt) NoRetry() bool { return true }

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
