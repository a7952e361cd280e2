package harness

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestParseStats(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=10,usec=250,usec_per_call=25.00,rejected_calls=0,failed_calls=0\r\ncmdstat_config|resetstat:calls=1,usec=3,usec_per_call=3.00\r\ncmdstat_zcount:calls=4,usec=8,usec_per_call=2.00\r\n"
	s := ParseStats(info)
	if got := s["evalsha"]; got != (CmdStat{Calls: 10, Usec: 250}) {
		t.Fatalf("evalsha: %+v", got)
	}
	if got := s.Add(s).Usec("evalsha", "zcount"); got != 516 {
		t.Fatalf("Add then Usec: %d", got)
	}
}

func TestDriveIsBoundedByCountAndTime(t *testing.T) {
	ctx := context.Background()
	n, err := Drive(ctx, Bounds{Workers: 4, Duration: time.Minute, MaxOps: 100}, func(context.Context, int) error { return nil })
	if err != nil || n != 100 {
		t.Fatalf("count bound: %d, %v", n, err)
	}
	start := time.Now()
	n, err = Drive(ctx, Bounds{Workers: 4, Duration: 50 * time.Millisecond, MaxOps: 1 << 62}, func(context.Context, int) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	if err != nil || n == 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("time bound: %d ops in %v, %v", n, time.Since(start), err)
	}
}

func TestQuantilesKeepSign(t *testing.T) {
	tm := NewTimings(2)
	for i := -50; i < 50; i++ {
		tm.Add((i+50)%2, time.Duration(i)*time.Microsecond)
	}
	q := tm.Quantiles(0.01, 0.5)
	if q[0] != -49*time.Microsecond || q[1] != 0 {
		t.Fatalf("quantiles: %v", q)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{{0, "0"}, {999.6, "1,000"}, {-123, "-123"}, {-1234567, "-1,234,567"}} {
		if got := Count(c.in); got != c.want {
			t.Errorf("Count(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReportWritesTablesInOrder(t *testing.T) {
	r := &Report{Title: "x benchmarks", Source: "bench/cmd/x", Command: "cd bench && go run ./cmd/x"}
	r.Add(TargetTable("Targets", "Ratios in one run.", []Target{{Name: "a / b", Measured: "2 vs 1", Target: "≤ 3×", Ratio: "2.00×", Pass: true}}))
	tb := Table{Title: "Load", Head: []string{"k", "v"}, Outro: "One is one."}
	tb.Add("one", "1")
	r.Add(tb)
	out := string(r.Markdown())
	for _, want := range []string{"# x benchmarks\n", "    cd bench && go run ./cmd/x\n", "## Targets\n\nRatios in one run.\n\n| figure |", "| a / b | 2 vs 1 | ≤ 3× | 2.00× | PASS |", "## Load\n\n| k | v |\n| --- | --- |\n| one | 1 |\n\nOne is one.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "## Targets") > strings.Index(out, "## Load") {
		t.Error("tables out of order")
	}
}

func TestStartServerRefusesARemoteAddress(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:6379", "example.com:6379", "nonsense"} {
		if _, err := StartServer(addr); err == nil {
			t.Errorf("StartServer(%q) took it", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:6379", "localhost:1", "[::1]:6379"} {
		if !IsLoopback(addr) {
			t.Errorf("IsLoopback(%q) = false", addr)
		}
	}
}

func TestTopLevelLeavesOutWhatExecRuns(t *testing.T) {
	ctx := context.Background()
	c := NewCommandCounter()
	pipe := c.ProcessPipelineHook(func(context.Context, []redis.Cmder) error { return nil })
	one := c.ProcessHook(func(context.Context, redis.Cmder) error { return nil })
	cmd := func(args ...any) redis.Cmder { return redis.NewCmd(ctx, args...) }
	for range 2 {
		if err := pipe(ctx, []redis.Cmder{cmd("multi"), cmd("set", "k", "v", "nx", "get"), cmd("time"), cmd("exec"), cmd("get", "k")}); err != nil {
			t.Fatal(err)
		}
		if err := one(ctx, cmd("evalsha", "0123", 1, "k")); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"multi": 2, "exec": 2, "get": 2, "evalsha": 2}
	if got := c.TopLevel(); !maps.Equal(got, want) {
		t.Fatalf("TopLevel: %v, want %v", got, want)
	}
	if c.Sent() != 12 || c.Trips() != 4 {
		t.Fatalf("sent %d in %d round trips", c.Sent(), c.Trips())
	}

	ph := Phase{Ops: 2, TopLevel: map[string]int64{"multi": 2, "exec": 2, "evalsha": 2, "hello": 1, "client": 1}}
	if err := ph.CheckCommands([]string{"multi", "exec", "evalsha"}); err != nil {
		t.Errorf("CheckCommands of every command: %v", err)
	}
	err := ph.CheckCommands([]string{"evalsha", "set"})
	if err == nil || !strings.Contains(err.Error(), "also sent exec, multi") || !strings.Contains(err.Error(), "never sent set") {
		t.Errorf("CheckCommands of the wrong commands: %v", err)
	}
}
