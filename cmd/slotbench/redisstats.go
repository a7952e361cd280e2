package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A cmdStat is one command's line of INFO commandstats. Commands that a
// script runs count on their own lines as well as in the script's usec.
type cmdStat struct {
	calls int64
	usec  int64
}

// serverStats maps a command's name (evalsha, incr, config|resetstat) to
// its statistics since the last CONFIG RESETSTAT.
type serverStats map[string]cmdStat

// ownCommands are the commands this program sends to read the server,
// which no phase counts as load.
var ownCommands = []string{"info", "config|resetstat", "zcount"}

// resetStats clears the server's command statistics.
func resetStats(ctx context.Context, admin *redis.Client) error {
	return admin.ConfigResetStat(ctx).Err()
}

// readStats reads INFO commandstats.
func readStats(ctx context.Context, admin *redis.Client) (serverStats, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	stats := serverStats{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var s cmdStat
		for _, field := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				s.calls = n
			case "usec":
				s.usec = n
			}
		}
		stats[name] = s
	}
	return stats, nil
}

// add returns the sum of s and t.
func (s serverStats) add(t serverStats) serverStats {
	sum := serverStats{}
	for _, m := range []serverStats{s, t} {
		for name, c := range m {
			sum[name] = cmdStat{sum[name].calls + c.calls, sum[name].usec + c.usec}
		}
	}
	return sum
}

// usec returns the server time spent in the named commands, in µs.
func (s serverStats) usec(names ...string) int64 {
	var n int64
	for _, name := range names {
		n += s[name].usec
	}
	return n
}

// perCall returns the named command's usec_per_call.
func (s serverStats) perCall(name string) float64 {
	c := s[name]
	if c.calls == 0 {
		return 0
	}
	return float64(c.usec) / float64(c.calls)
}

// commands returns the number of commands the server ran, those run by
// scripts included and this program's own reads excluded.
func (s serverStats) commands() int64 {
	var n int64
	for name, c := range s {
		if !isOwn(name) {
			n += c.calls
		}
	}
	return n
}

func isOwn(name string) bool {
	for _, own := range ownCommands {
		if name == own {
			return true
		}
	}
	return false
}

// memoryUsage returns MEMORY USAGE summed over keys, counting a key that
// does not exist as 0 bytes.
func memoryUsage(ctx context.Context, admin *redis.Client, keys ...string) (int64, error) {
	var total int64
	for _, key := range keys {
		n, err := admin.MemoryUsage(ctx, key, 0).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// countKeys returns the number of keys matching pattern, by SCAN.
func countKeys(ctx context.Context, admin *redis.Client, pattern string) (int64, error) {
	var n int64
	iter := admin.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	return n, iter.Err()
}

// redisVersion returns the server's redis_version.
func redisVersion(ctx context.Context, admin *redis.Client) (string, error) {
	info, err := admin.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "unknown", nil
}

// counter is a client hook that counts the commands the client sends,
// pipelined ones included, its round trips, and the EVALSHA calls of each
// script.
type counter struct {
	sent    atomic.Int64
	trips   atomic.Int64
	scripts map[string]*atomic.Int64 // by SHA1; fixed before the hook is added
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook {
	return next
}

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.trips.Add(1)
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.trips.Add(1)
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

func (c *counter) count(cmd redis.Cmder) {
	c.sent.Add(1)
	args := cmd.Args()
	if len(args) < 2 || args[0] != "evalsha" {
		return
	}
	if sha, ok := args[1].(string); ok {
		if n := c.scripts[sha]; n != nil {
			n.Add(1)
		}
	}
}

// isLoopback reports whether addr's host is a loopback address or
// localhost.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
