package script

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
)

// send sends n units in one pipeline per try to the master of key (the
// client itself, but on a Cluster), with Replicas ended by WAIT: each
// unit is the commands queue(do, i) queues with do, such as one script
// call. WAIT's reply counts once a unit wrote, as wrote(i) tells, or if
// wrote is nil, as a last reply that is not a refusal does
// (callerr.Refused). A unit whose commands met a redirect or a state a new try can
// mend (see tries) is sent again, with the other units of its kind, to
// the node the Cluster names, and so is one that redo(i) (if not nil)
// asks for again. An error reply that proves nothing else stays with its
// unit's commands, each marked (callerr.Sent) with whether an earlier try
// of the unit may have written, where that changes what it tells.
//
// The error returned is the connection's, or the WAIT's (see
// acknowledged); every unit may then have run.
func (r *Runner) send(ctx context.Context, key string, n int, queue func(do func(*redis.Cmd), i int), redo, wrote func(i int) bool) error {
	units := make([][]*redis.Cmd, n)
	maybe := make([]bool, n) // whether a try of the unit may have written
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	var t tries
	var to target // where the Cluster sent the units, when it did
	follows := 0  // redirects followed at once, without a pause
	for {
		conn, err := r.node(ctx, key, to)
		if err != nil {
			if t.again(ctx, r.Client, err) {
				continue
			}
			return callerr.Sent(err, anyMaybe(maybe, pending))
		}
		var wait *redis.IntCmd
		_, err = conn.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range pending {
				if to.asking {
					_ = p.Process(ctx, once{redis.NewCmd(ctx, "asking")})
				}
				units[i] = units[i][:0]
				queue(func(cmd *redis.Cmd) {
					units[i] = append(units[i], cmd)
					_ = p.Process(ctx, once{cmd})
				}, i)
			}
			if r.Replicas > 0 {
				wait = redis.NewIntCmd(ctx, "wait", r.Replicas, r.ReplicaTimeout.Milliseconds())
				_ = p.Process(ctx, onceInt{wait})
			}
			return nil
		})
		if err != nil && !errors.As(err, new(redis.Error)) {
			// The connection failed: any unit may have run, or none.
			for _, i := range pending {
				maybe[i] = maybe[i] || mayHaveWritten(err)
			}
			if t.again(ctx, r.Client, err) {
				to = target{}
				continue
			}
			return callerr.Sent(err, anyMaybe(maybe, pending))
		}

		var next []int
		var mend error // the first error of a unit that a later try may mend
		ran, followed := false, false
		to = target{}
		for _, i := range pending {
			if err := redirected(units[i]); err != nil {
				next = append(next, i)
				if followed || mend != nil {
					continue // the units share their keys: one redirect serves all
				}
				// Nodes whose views of the slots differ for a moment can
				// send a unit back and forth: after a few redirects
				// followed at once, the next waits its pause.
				if moved := r.follow(ctx, err); moved.node != nil && follows < maxFollows {
					to, followed = moved, true
				} else {
					mend = err
				}
				continue
			}
			if redo != nil && redo(i) {
				next = append(next, i)
				continue
			}
			if wrote != nil {
				ran = ran || wrote(i)
			} else if err := units[i][len(units[i])-1].Err(); err == nil || err == redis.Nil || !callerr.Refused(err) {
				ran = true
			}
		}
		if ran && wait != nil {
			if err := r.acknowledged(wait); err != nil {
				return err
			}
		}
		pending = next
		if to.node != nil {
			follows++
		}
		if len(pending) > 0 && mend != nil {
			follows = 0
			if !t.again(ctx, r.Client, mend) {
				break
			}
		}
		if len(pending) == 0 {
			break
		}
	}
	for i, unit := range units {
		for _, cmd := range unit {
			if err := cmd.Err(); err != nil && err != redis.Nil && callerr.OutcomeUnknown(err) != maybe[i] {
				cmd.SetErr(callerr.Sent(err, maybe[i]))
			}
		}
	}
	return nil
}

// anyMaybe reports whether a unit of pending may have written.
func anyMaybe(maybe []bool, pending []int) bool {
	for _, i := range pending {
		if maybe[i] {
			return true
		}
	}
	return false
}

// redirected returns the first error among a unit's replies that shows
// the unit did not run there and a later try may run it: a Cluster's
// redirect, or a state that passes (see mendable).
func redirected(unit []*redis.Cmd) error {
	for _, cmd := range unit {
		if err := cmd.Err(); err != nil && mendable(err) != never {
			return err
		}
	}
	return nil
}

// maxFollows is how many redirects in a row a unit follows without a
// pause.
const maxFollows = 3

// A target is the node a Cluster redirected a unit to, and whether the
// redirect was an ASK, which the unit follows with ASKING.
type target struct {
	node   *redis.Client
	asking bool
}

// node returns the connection for a try: the target a redirect named,
// else the master of key's slot on a Cluster, or key's shard on a Ring,
// so that commands without a key (MULTI, EXEC, WAIT) go with the unit;
// else the client.
func (r *Runner) node(ctx context.Context, key string, to target) (redis.Cmdable, error) {
	if to.node != nil {
		return to.node, nil
	}
	switch c := r.Client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Ring:
		return c.GetShardClientForKey(key)
	}
	return r.Client, nil
}

// follow reloads a Cluster's view of its slots after err, a MOVED or an
// ASK, and returns the node it names, or no target when err is neither
// or names a node the Cluster does not know.
func (r *Runner) follow(ctx context.Context, err error) target {
	cluster, ok := r.Client.(*redis.ClusterClient)
	if !ok {
		return target{}
	}
	moved, ask, addr := redirect(err)
	if !moved && !ask {
		return target{}
	}
	// ForEachShard reloads the slots first, so that later calls go to the
	// new master.
	var mu sync.Mutex
	var node *redis.Client
	_ = cluster.ForEachShard(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			node = c
			mu.Unlock()
		}
		return nil
	})
	return target{node: node, asking: ask}
}
