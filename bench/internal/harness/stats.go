package harness

import (
	"bufio"
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A CmdStat is one command's line of INFO commandstats. Commands that a
// script runs count on their own lines as well as in the script's usec.
type CmdStat struct {
	Calls int64
	Usec  int64
}

// Stats maps a command's name, as INFO commandstats spells it after
// "cmdstat_" (evalsha, incr, config|resetstat), to its statistics since
// the last CONFIG RESETSTAT.
type Stats map[string]CmdStat

// OwnCommands are the commands the harness and its samplers send to read
// the server during a phase, which Stats.Commands does not count as load.
// A sampler should read with one of them, and the load should not use it.
var OwnCommands = []string{"info", "config|resetstat", "zcount"}

// ResetStats clears the server's command statistics.
func ResetStats(ctx context.Context, admin *redis.Client) error {
	return admin.ConfigResetStat(ctx).Err()
}

// ReadStats reads INFO commandstats.
func ReadStats(ctx context.Context, admin *redis.Client) (Stats, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return ParseStats(info), nil
}

// ParseStats reads the cmdstat_ lines of an INFO reply.
func ParseStats(info string) Stats {
	stats := Stats{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var s CmdStat
		for _, field := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				s.Calls = n
			case "usec":
				s.Usec = n
			}
		}
		stats[name] = s
	}
	return stats
}

// Add returns the sum of s and t.
func (s Stats) Add(t Stats) Stats {
	sum := Stats{}
	for _, m := range []Stats{s, t} {
		for name, c := range m {
			sum[name] = CmdStat{sum[name].Calls + c.Calls, sum[name].Usec + c.Usec}
		}
	}
	return sum
}

// Usec returns the server time spent in the named commands, in µs.
func (s Stats) Usec(names ...string) int64 {
	var n int64
	for _, name := range names {
		n += s[name].Usec
	}
	return n
}

// IsOwn reports whether the command name is one of OwnCommands.
func IsOwn(name string) bool {
	for _, own := range OwnCommands {
		if name == own {
			return true
		}
	}
	return false
}
