package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit"
)

// The seed's two scripts, verbatim: a plain counter at KEYS[1], ARGV[1]
// the limit.
const (
	seedAcquire = "local count = redis.call('get',KEYS[1]);if not count or tonumber(count) < tonumber(ARGV[1]) then count=redis.call('incr',KEYS[1]);redis.call('EXPIRE', KEYS[1], 300);end;return tonumber(count)"
	seedRelease = "local count = redis.call('get',KEYS[1]);if count and tonumber(count)>0 then count=redis.call('incrby',KEYS[1],-1);end;return tonumber(count)"
)

// twoReads is the two reads of the library's refusal at a full key, alone:
// its full marker's PTTL and the caller's own lease, with the library's
// KEYS and ARGV (see scripts/acquire.lua).
const twoReads = "local marked = redis.call('PTTL', KEYS[3]);if marked > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[4]) then return -marked end;return 0"

// A script is a Lua script's text and SHA1, as EVALSHA names it.
type script struct {
	src string
	sha string
}

func newScript(src string) script {
	sum := sha1.Sum([]byte(src))
	return script{src: src, sha: hex.EncodeToString(sum[:])}
}

// scripts are the scripts the benchmark runs without the library: the
// seed's, and the library's own as the library sends them.
type scripts struct {
	seedAcquire, seedRelease script
	twoReads                 script // the refusal's two reads, alone
	acquire, release         call
}

// load loads the seed's scripts into the server's script cache; the
// library loads its own.
func (s scripts) load(ctx context.Context, c *redis.Client) error {
	for _, sc := range []script{s.seedAcquire, s.seedRelease} {
		if err := c.ScriptLoad(ctx, sc.src).Err(); err != nil {
			return err
		}
	}
	return nil
}

// A call is one EVALSHA as the library sent it.
type call struct {
	sha  string
	keys []string
	argv []string // the holder comes last
}

// capture makes a Limiter with cfg on a client of its own that records
// every EVALSHA, and returns the calls that TryAcquire and Release of
// holder send, with the script of each: what baseline (b) replays. Each is
// made twice, since the first of each may meet NOSCRIPT and fall back to
// EVAL, which loads the script.
func capture(ctx context.Context, addr string, cfg slotlimit.Config, holder string) (acquire, release call, err error) {
	rec := &recorder{}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	c.AddHook(rec)
	l, err := slotlimit.New(c, cfg)
	if err != nil {
		return call{}, call{}, err
	}
	for range 2 {
		if _, err := l.TryAcquire(ctx, holder); err != nil {
			return call{}, call{}, err
		}
	}
	acquire = rec.last
	for range 2 {
		if _, err := l.Release(ctx, holder); err != nil {
			return call{}, call{}, err
		}
	}
	release = rec.last
	for _, x := range []call{acquire, release} {
		if x.sha == "" || len(x.argv) == 0 || x.argv[len(x.argv)-1] != holder {
			return call{}, call{}, fmt.Errorf("cannot read the library's calls: %+v", x)
		}
	}
	return acquire, release, nil
}

// A recorder is a client hook that keeps the last EVALSHA sent. It is used
// by one goroutine at a time.
type recorder struct {
	last call
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) >= 3 && args[0] == "evalsha" {
			var x call
			x.sha = fmt.Sprint(args[1])
			nkeys, _ := strconv.Atoi(fmt.Sprint(args[2]))
			for i, a := range args[3:] {
				if i < nkeys {
					x.keys = append(x.keys, fmt.Sprint(a))
				} else {
					x.argv = append(x.argv, fmt.Sprint(a))
				}
			}
			r.last = x
		}
		return next(ctx, cmd)
	}
}

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Names of the no-contention variants.
const (
	nameIncr    = "(a) go-redis INCR + DECR"
	nameSeed    = "(c) seed scripts, EVALSHA"
	nameRaw     = "(b) library scripts, bare EVALSHA"
	nameLimiter = "slotlimit Limiter TryAcquire + Release"
	// nameTwoReads names the refusal's two reads, in the script costs.
	nameTwoReads = "the library's refusal's two reads alone (PTTL, ZSCORE)"
)

// A pairer takes one slot for worker w and gives it back.
type pairer struct {
	name     string
	commands []string // the top-level commands it sends, as INFO commandstats names them
	acquire  func(ctx context.Context, w int) error
	release  func(ctx context.Context, w int) error
}

// incrDecr is baseline (a): INCR and DECR of a plain counter, no check.
func incrDecr(c *redis.Client, key string) pairer {
	return pairer{
		name:     nameIncr,
		commands: []string{"incr", "decr"},
		acquire:  func(ctx context.Context, _ int) error { return c.Incr(ctx, key).Err() },
		release:  func(ctx context.Context, _ int) error { return c.Decr(ctx, key).Err() },
	}
}

// seedPair is baseline (c): the seed's two scripts by EVALSHA on a plain
// counter.
func seedPair(c *redis.Client, s scripts, key string, limit int64) pairer {
	keys := []string{key}
	max := strconv.FormatInt(limit, 10)
	return pairer{
		name:     nameSeed,
		commands: []string{"evalsha"},
		acquire: func(ctx context.Context, _ int) error {
			n, err := c.EvalSha(ctx, s.seedAcquire.sha, keys, max).Int64()
			if err == nil && n > limit {
				err = fmt.Errorf("seed acquire: count %d over limit %d", n, limit)
			}
			return err
		},
		release: func(ctx context.Context, _ int) error {
			return c.EvalSha(ctx, s.seedRelease.sha, keys).Err()
		},
	}
}

// rawLease is baseline (b): the library's own acquire and release scripts
// by EVALSHA, with the KEYS and ARGV the library sends and no library code
// around them. Each worker w holds as holders[w]. The arguments are passed
// one by one, as a caller of EvalSha writes them.
func rawLease(c *redis.Client, acquire, release call, holders []string) pairer {
	a, r := acquire.argv, release.argv
	return pairer{
		name:     nameRaw,
		commands: []string{"evalsha"},
		acquire: func(ctx context.Context, w int) error {
			reply, err := c.EvalSha(ctx, acquire.sha, acquire.keys, a[0], a[1], a[2], holders[w]).Int64Slice()
			if err != nil {
				return err
			}
			if len(reply) != 3 || reply[1] < 1 {
				return fmt.Errorf("acquire script: refused or odd reply %v", reply)
			}
			return nil
		},
		release: func(ctx context.Context, w int) error {
			n, err := c.EvalSha(ctx, release.sha, release.keys, r[0], r[1], r[2], r[3], r[4], holders[w]).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("release script: %s held no lease", holders[w])
			}
			return err
		},
	}
}

// checkArity reports an error unless the library's calls have the number of
// arguments rawLease and the allocation rows pass.
func checkArity(acquire, release call) error {
	if len(acquire.argv) != 4 || len(release.argv) != 6 {
		return fmt.Errorf("the library's script arguments changed (acquire %q, release %q); update rawLease", acquire.argv, release.argv)
	}
	return nil
}

// limiterPair is the library itself: Limiter.TryAcquire and Release.
func limiterPair(l *slotlimit.Limiter, holders []string) pairer {
	return pairer{
		name:     nameLimiter,
		commands: []string{"evalsha"},
		acquire: func(ctx context.Context, w int) error {
			res, err := l.TryAcquire(ctx, holders[w])
			if err == nil && !res.Acquired {
				err = fmt.Errorf("TryAcquire refused %s: %d of %d held", holders[w], res.Count, res.Limit)
			}
			return err
		},
		release: func(ctx context.Context, w int) error {
			ok, err := l.Release(ctx, holders[w])
			if err == nil && !ok {
				err = fmt.Errorf("release: %s held no lease", holders[w])
			}
			return err
		},
	}
}
