package harness

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"slices"
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

// PerCall returns the named command's usec_per_call, or 0 when it ran
// no call.
func (s Stats) PerCall(name string) float64 {
	c := s[name]
	if c.Calls == 0 {
		return 0
	}
	return float64(c.Usec) / float64(c.Calls)
}

// Commands returns the number of commands the server ran, those run by
// scripts included and OwnCommands excluded.
func (s Stats) Commands() int64 {
	var n int64
	for name, c := range s {
		if !IsOwn(name) {
			n += c.Calls
		}
	}
	return n
}

// LoadUsec returns the server time of every command the server ran, those
// run by scripts included (so a script's commands count in its own time
// and again on their own lines) and OwnCommands excluded, in µs.
func (s Stats) LoadUsec() int64 {
	var n int64
	for name, c := range s {
		if !IsOwn(name) {
			n += c.Usec
		}
	}
	return n
}

// NestedUsec returns the server time of the commands that the top-level
// commands top ran, those of scripts and of EXEC: every command's time but
// top's and OwnCommands', in µs. It is part of top's time.
func (s Stats) NestedUsec(top ...string) int64 {
	return s.LoadUsec() - s.Usec(top...)
}

// Nested lists the commands that the top-level commands top ran, per
// call of calls, as "get, set×2, time, pexpire×0.08": every command but
// top and OwnCommands, in order of name, each with its count per call
// unless that is 1. It returns "none" when there are none.
func (s Stats) Nested(calls int64, top ...string) string {
	var names []string
	for name, c := range s {
		if !slices.Contains(top, name) && !IsOwn(name) && c.Calls > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	for i, name := range names {
		n := Ratio(s[name].Calls, calls)
		switch {
		case math.Abs(n-1) < 0.005:
		case math.Abs(n-math.Round(n)) < 0.005:
			names[i] += fmt.Sprintf("×%.0f", n)
		default:
			names[i] += fmt.Sprintf("×%.2f", n)
		}
	}
	return strings.Join(names, ", ")
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
