package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A tripCounter counts, for each server a client talks to, the commands
// it sends alone (by name) and its pipelines (and the commands in them),
// leaving out what the client sends of its own: the commands that set up
// a connection, and a cluster client's look at the slots.
type tripCounter struct {
	mu    sync.Mutex
	nodes map[string]*nodeTrips
}

type nodeTrips struct {
	single    map[string]int // commands sent alone, by name
	pipelines int            // pipelines: a round trip each
	piped     int            // the commands in them
}

func (c *tripCounter) node(addr string) *nodeTrips {
	if c.nodes == nil {
		c.nodes = make(map[string]*nodeTrips)
	}
	n, ok := c.nodes[addr]
	if !ok {
		n = &nodeTrips{single: make(map[string]int)}
		c.nodes[addr] = n
	}
	return n
}

// hook returns a go-redis hook that counts what a client of addr sends.
func (c *tripCounter) hook(addr string) redis.Hook { return tripHook{c, addr} }

type tripHook struct {
	c    *tripCounter
	addr string
}

// clientsOwn are the commands that a client sends of its own.
var clientsOwn = []string{"hello", "client", "auth", "select", "readonly", "cluster", "command"}

func (h tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if slices.Contains(clientsOwn, cmd.Name()) {
			return next(ctx, cmd)
		}
		h.c.mu.Lock()
		h.c.node(h.addr).single[cmd.Name()]++
		h.c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(cmd redis.Cmder) bool { return !slices.Contains(clientsOwn, cmd.Name()) }) {
			return next(ctx, cmds)
		}
		h.c.mu.Lock()
		n := h.c.node(h.addr)
		n.pipelines++
		n.piped += len(cmds)
		h.c.mu.Unlock()
		return next(ctx, cmds)
	}
}

// countedClient returns a new client of b's server whose round trips to
// each server (each master of a Cluster) count counts.
func countedClient(t *testing.T, b *redistest.Backend, counts *tripCounter) redis.UniversalClient {
	var client redis.UniversalClient
	if b.Name == "cluster" {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.Opts.Addrs})
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(counts.hook(node.Options().Addr)) })
		client = cc
	} else {
		c := redis.NewClient(&redis.Options{Addr: b.Opts.Addrs[0]})
		c.AddHook(counts.hook(""))
		client = c
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// Discovery, which the page runs every ten seconds and ls once, costs
// round trips by the keys it scans, not one or two per primitive: on each
// master its SCANs, then one pipeline per classifyBatch of the Limiters
// and Counters found there by their limit record alone, a GET and a TYPE
// each, and no command of its own sent alone but SCAN. It still tells
// each Limiter from each Counter as before.
func TestDiscoveryRoundTripsBoundedOnManyCounters(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		ctx := context.Background()
		var buf [6]byte
		rand.Read(buf[:])
		prefix := "bound" + hex.EncodeToString(buf[:]) + ":"
		const counters, limiters, lapsed, oldLimiters = 3000, 20, 10, 5
		var keys []string
		write := func(p redis.Pipeliner, key, rec string, data func(key string)) {
			p.Set(ctx, "{"+key+"}/limit", rec, time.Hour)
			keys = append(keys, key, "{"+key+"}/limit")
			if data != nil {
				data(key)
			}
		}
		_, err := b.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range counters {
				write(p, fmt.Sprintf("%sc:%d", prefix, i), "limit=5", func(k string) { p.Set(ctx, k, "1", time.Hour) })
			}
			for i := range limiters {
				write(p, fmt.Sprintf("%sl:%d", prefix, i), "limit=5&lease=5000", func(k string) {
					p.ZAdd(ctx, k, redis.Z{Score: 1, Member: "h"})
				})
			}
			for i := range lapsed { // a Counter's record, its count gone
				write(p, fmt.Sprintf("%sgone:%d", prefix, i), "limit=5", nil)
			}
			for i := range oldLimiters { // a record without a lease, beside a lease set
				write(p, fmt.Sprintf("%sold:%d", prefix, i), "limit=5", func(k string) {
					p.ZAdd(ctx, k, redis.Z{Score: 1, Member: "h"})
				})
			}
			return nil
		})
		require.NoError(t, err)
		t.Cleanup(func() {
			b.Client.Pipelined(context.Background(), func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(context.Background(), k)
				}
				return nil
			})
		})

		counts := &tripCounter{}
		client := countedClient(t, b, counts)
		fs, err := findPrimitives(ctx, client, "", prefix+"*", time.Minute)
		require.NoError(t, err)

		kinds := map[string]int{}
		for _, f := range fs {
			kinds[f.Kind]++
			if strings.HasPrefix(f.Key, prefix+"l:") || strings.HasPrefix(f.Key, prefix+"old:") {
				assert.Equal(t, kindLimiter, f.Kind, f.Key)
			} else {
				assert.Equal(t, kindCounter, f.Kind, f.Key)
			}
		}
		assert.Equal(t, map[string]int{kindCounter: counters + lapsed, kindLimiter: limiters + oldLimiters}, kinds)

		counts.mu.Lock()
		defer counts.mu.Unlock()
		found := counters + limiters + lapsed + oldLimiters
		masters, pipelines, piped := 0, 0, 0
		for addr, n := range counts.nodes {
			t.Logf("%q: %v alone, %d pipelines of %d commands", addr, n.single, n.pipelines, n.piped)
			if n.single["scan"] > 0 {
				masters++
			}
			pipelines += n.pipelines
			piped += n.piped
			for name := range n.single {
				assert.Equal(t, "scan", name, "%s: a command sent alone", addr)
			}
		}
		require.Positive(t, masters)
		// On each master ⌈n/classifyBatch⌉ for the n found there; summed,
		// at most ⌈found/classifyBatch⌉ + masters - 1.
		assert.LessOrEqual(t, pipelines, (found+classifyBatch-1)/classifyBatch+masters-1, "pipelines")
		assert.Equal(t, 2*found, piped, "a GET and a TYPE each")
	})
}
