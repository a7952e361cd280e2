package harness

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Machine describes where a run ran.
type Machine struct {
	CPUs  int    // runtime.NumCPU
	Model string // the CPU's model name
	Go    string // Go version, OS and architecture
	Redis string // the server's redis_version
	Date  string // when the run began, UTC
}

// DescribeMachine reads this machine's CPU and Go, and the server's
// version.
func DescribeMachine(ctx context.Context, admin *redis.Client) (Machine, error) {
	v, err := redisVersion(ctx, admin)
	if err != nil {
		return Machine{}, err
	}
	return Machine{
		CPUs:  runtime.NumCPU(),
		Model: cpuModel(),
		Go:    runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Redis: v,
		Date:  time.Now().UTC().Format("2006-01-02 15:04 UTC"),
	}, nil
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

// cpuModel returns the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
