package redistest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Stopped reports whether process pid is stopped (SIGSTOP), as /proc
// shows it.
func Stopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(rest, "T")
}

// StopProcess stops process pid (SIGSTOP) and waits until it is stopped,
// for 10 s at most.
func StopProcess(tb testing.TB, pid int) {
	tb.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		tb.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !Stopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			tb.Fatalf("process %d does not stop", pid)
		}
	}
}

// StopSelf stops the calling process (SIGSTOP) and returns once it is
// continued, for a child whose parent keeps it stopped for 300 ms at
// least. The stop takes hold of every thread a moment after the signal is
// sent, maybe before this goroutine reads the clock again: StopSelf
// returns once 250 ms have passed since it sent the signal, which it can
// see only once continued.
func StopSelf() {
	sent := time.Now()
	syscall.Kill(os.Getpid(), syscall.SIGSTOP) //nolint:errcheck // the parent continues it
	for time.Since(sent) < 250*time.Millisecond {
		time.Sleep(time.Millisecond)
	}
}

// ServerPid returns the process ID of the server client talks to.
func ServerPid(tb testing.TB, ctx context.Context, client *redis.Client) int {
	tb.Helper()
	return infoInt(tb, ctx, client, "server", "process_id")
}

// BlockedClients returns how many clients of the server wait in a
// blocking command, such as WAIT.
func BlockedClients(tb testing.TB, ctx context.Context, client *redis.Client) int {
	tb.Helper()
	return infoInt(tb, ctx, client, "clients", "blocked_clients")
}

// infoInt returns the integer field of INFO section.
func infoInt(tb testing.TB, ctx context.Context, client *redis.Client, section, field string) int {
	tb.Helper()
	info, err := client.Info(ctx, section).Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("no %s in INFO %s:\n%s", field, section, info)
	return 0
}
