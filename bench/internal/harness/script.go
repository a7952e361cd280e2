package harness

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"

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

// A Call is one EVALSHA as a library sent it, to replay with no library
// code around it.
type Call struct {
	SHA  string
	Keys []string
	Argv []string
}

// A Recorder is a go-redis hook that keeps the last EVALSHA its client
// sent, so that a benchmark can replay a library's own calls as a
// baseline that follows the library's scripts as they change.
type Recorder struct {
	mu   sync.Mutex
	last Call
}

// Last returns the last EVALSHA sent, or the zero Call.
func (r *Recorder) Last() Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// DialHook implements redis.Hook.
func (r *Recorder) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

// ProcessHook implements redis.Hook.
func (r *Recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) >= 3 && args[0] == "evalsha" {
			var x Call
			x.SHA = fmt.Sprint(args[1])
			nkeys, _ := strconv.Atoi(fmt.Sprint(args[2]))
			for i, a := range args[3:] {
				if i < nkeys {
					x.Keys = append(x.Keys, fmt.Sprint(a))
				} else {
					x.Argv = append(x.Argv, fmt.Sprint(a))
				}
			}
			r.mu.Lock()
			r.last = x
			r.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook; pipelines are not recorded.
func (r *Recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// NewRecordingClient returns a client of the server with a Recorder on
// it. The caller closes the client.
func (e *Env) NewRecordingClient() (*redis.Client, *Recorder) {
	c := redis.NewClient(&redis.Options{Addr: e.Addr})
	rec := &Recorder{}
	c.AddHook(rec)
	return c, rec
}
