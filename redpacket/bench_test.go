package redpacket_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/classic"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/internal/sqltest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// benchStore returns a Store on a redis-server of its own, and its
// client.
func benchStore(b *testing.B) (*redpacket.Store, *redis.Client) {
	b.Helper()
	srv := redistest.StartServer(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { client.Close() })
	s, err := redpacket.New(client, redpacket.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return s, client
}

// benchPacket creates packet id of n shares on s.
func benchPacket(b *testing.B, s *redpacket.Store, id string, n int) {
	b.Helper()
	if err := s.Create(context.Background(), redpacket.Packet{ID: id, Total: int64(n) * 100, Count: n}); err != nil {
		b.Fatal(err)
	}
}

// A grab that takes a share, each by a user of its own.
func BenchmarkGrab(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	benchPacket(b, s, "p", b.N)
	users := make([]string, b.N)
	for i := range users {
		users[i] = fmt.Sprint("u", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Grab(ctx, "p", users[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// A grab by a user who holds a claim: the claim again.
func BenchmarkGrabAgain(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	benchPacket(b, s, "p", 1)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Grab(ctx, "p", "u"); err != nil {
			b.Fatal(err)
		}
	}
}

// A grab of a sold-out packet: the refusal.
func BenchmarkGrabSoldOut(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	benchPacket(b, s, "p", 1)
	if _, err := s.Grab(ctx, "p", "first"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Grab(ctx, "p", "late"); err == nil {
			b.Fatal("not sold out")
		}
	}
}

// A Create of a packet of 10 shares.
func BenchmarkCreate(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprint("p", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Create(ctx, redpacket.Packet{ID: ids[i], Total: 1000, Count: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// Remaining: one read.
func BenchmarkRemaining(b *testing.B) {
	s, _ := benchStore(b)
	ctx := context.Background()
	benchPacket(b, s, "p", 10)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := s.Remaining(ctx, "p"); err != nil {
			b.Fatal(err)
		}
	}
}

// Drain of b.N claims into SQLite, Batch 100: the time per claim written.
func BenchmarkDrain(b *testing.B) {
	s, client := benchStore(b)
	ctx := context.Background()
	benchPacket(b, s, "p", b.N)
	for i := range b.N {
		if _, err := s.Grab(ctx, "p", fmt.Sprint("u", i)); err != nil {
			b.Fatal(err)
		}
	}
	db := sqltest.SQLite(b)
	if err := redpacket.CreateSchema(ctx, db); err != nil {
		b.Fatal(err)
	}
	p, err := redpacket.NewPersister(client, redpacket.PersisterConfig{DB: db, Dialect: redpacket.SQLite})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n, err := p.Drain(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if n != b.N+1 {
		b.Fatalf("wrote %d entries, want %d", n, b.N+1)
	}
}

// BenchmarkGrabCrowd grabs shares of one packet at a time, each grab by a
// user of its own, with 1 and 64 grabbers at once: a Store's Grab, with
// Grabs coalesced (the default) and with DisableCoalescing, against the
// classic script. Every grab takes a share: a packet has 10,000 shares,
// and the grabbers move to the next packet as one runs out. It reports
// grabs/s, Redis µs per grab (INFO commandstats usec of EVALSHA and EVAL,
// which includes the commands the scripts run), script calls per grab,
// and the median time of a grab as its caller sees it.
//
//	go test -run '^$' -bench GrabCrowd ./redpacket/
func BenchmarkGrabCrowd(b *testing.B) {
	const shares = 10_000
	srv := redistest.StartServer(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 128})
	b.Cleanup(func() { client.Close() })
	ctx := context.Background()
	classic := redis.NewScript(classic.Grab)
	if err := classic.Load(ctx, client).Err(); err != nil {
		b.Fatal(err)
	}
	type grabFunc func(ctx context.Context, packet, user string) error
	variants := []struct {
		name string
		make func(b *testing.B, packets []string) grabFunc
	}{
		{"coalesced", func(b *testing.B, packets []string) grabFunc { return storeGrabs(b, client, packets, false) }},
		{"alone", func(b *testing.B, packets []string) grabFunc { return storeGrabs(b, client, packets, true) }},
		{"classic", func(b *testing.B, packets []string) grabFunc {
			for _, id := range packets {
				if err := client.HSet(ctx, "red_packet_"+id, "stock", shares, "unit_amount", "1.0").Err(); err != nil {
					b.Fatal(err)
				}
			}
			return func(ctx context.Context, packet, user string) error {
				n, err := client.EvalSha(ctx, classic.Hash(), []string{packet}, user+"-"+fmt.Sprint(time.Now().UnixMilli())).Int()
				if err == nil && n == 0 {
					err = fmt.Errorf("packet %s sold out", packet)
				}
				return err
			}
		}},
	}
	for _, grabbers := range []int{1, 64} {
		for _, v := range variants {
			b.Run(fmt.Sprintf("%s/grabbers=%d", v.name, grabbers), func(b *testing.B) {
				if err := client.FlushAll(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				packets := make([]string, (b.N+shares-1)/shares)
				for i := range packets {
					packets[i] = fmt.Sprint("p", i)
				}
				grab := v.make(b, packets)
				users := make([]string, b.N)
				for i := range users {
					users[i] = fmt.Sprintf("%010d", i)
				}
				if err := client.ConfigResetStat(ctx).Err(); err != nil {
					b.Fatal(err)
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, grabbers)
				took := make([]time.Duration, b.N)
				b.ResetTimer()
				for range grabbers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							j := int(next.Add(1) - 1)
							if j >= b.N {
								return
							}
							start := time.Now()
							if err := grab(ctx, packets[j/shares], users[j]); err != nil {
								errs <- err
								return
							}
							took[j] = time.Since(start)
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				usec, calls := scriptStats(b, client, b.N)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "grabs/s")
				b.ReportMetric(usec/float64(b.N), "redis-µs/grab")
				b.ReportMetric(calls/float64(b.N), "calls/grab")
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
			})
		}
	}
}

// storeGrabs creates packets of 10,000 shares, 100 each, on a Store of
// client, and returns its Grab.
func storeGrabs(b *testing.B, client *redis.Client, packets []string, alone bool) func(context.Context, string, string) error {
	s, err := redpacket.New(client, redpacket.Config{DisableCoalescing: alone})
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range packets {
		benchPacket(b, s, id, 10_000)
	}
	return func(ctx context.Context, packet, user string) error {
		_, err := s.Grab(ctx, packet, user)
		return err
	}
}

// scriptStats returns the server time, in µs, and the calls of EVALSHA
// and EVAL since the last CONFIG RESETSTAT, and logs each command's calls
// and µs per grab, of grabs: the scripts' own commands are counted on
// lines of their own, and their time is part of the script's.
func scriptStats(b *testing.B, client *redis.Client, grabs int) (usec, calls float64) {
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd || name == "config|resetstat" {
			continue
		}
		var c, u float64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				c = n
			case "usec":
				u = n
			}
		}
		b.Logf("%-8s %8.4f calls/grab %8.3f µs/grab", name, c/float64(grabs), u/float64(grabs))
		if name == "evalsha" || name == "eval" {
			calls += c
			usec += u
		}
	}
	return usec, calls
}
