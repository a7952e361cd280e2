package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// An Env is what every scenario of a run shares: the options, the load
// client and its command counts, the admin client, and the prefix of the
// run's keys.
type Env struct {
	Options
	Addr   string          // the server's host:port
	Client *redis.Client   // the load, for every variant alike
	Hook   *CommandCounter // counts Client's commands
	Admin  *redis.Client   // statistics, sampling and clean-up, outside the load's pool
	Prefix string          // begins every key of the run: "<name>:<random tag>:"
	extra  []*redis.Client // made by NewClient, closed by Close
}

// NewEnv connects to addr with a load client of o.Pool connections and a
// small admin client. name begins the run's key prefix.
func NewEnv(name, addr string, o Options) *Env {
	tag := make([]byte, 4)
	rand.Read(tag)
	e := &Env{
		Options: o,
		Addr:    addr,
		Admin:   redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4}),
		Prefix:  name + ":" + hex.EncodeToString(tag) + ":",
	}
	e.Client, e.Hook = e.NewClient(o.Pool)
	return e
}

// Key returns the run's key named name.
func (e *Env) Key(name string) string {
	return e.Prefix + name
}

// NewClient returns another client of the server with a pool of pool
// connections, and a hook that counts its commands. Close closes it.
func (e *Env) NewClient(pool int) (*redis.Client, *CommandCounter) {
	c := redis.NewClient(&redis.Options{Addr: e.Addr, PoolSize: pool})
	hook := NewCommandCounter()
	c.AddHook(hook)
	e.extra = append(e.extra, c)
	return c, hook
}

// Del deletes keys with the admin client, a thousand to a round trip.
func (e *Env) Del(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := e.Admin.Del(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// Close deletes every key whose name holds the run's prefix, hash-tagged
// names included, and closes the clients.
func (e *Env) Close(ctx context.Context) error {
	var keys []string
	iter := e.Admin.Scan(ctx, 0, "*"+e.Prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	err := iter.Err()
	if err == nil {
		err = e.Del(ctx, keys...)
	}
	for _, c := range e.extra {
		c.Close()
	}
	e.Admin.Close()
	return err
}
