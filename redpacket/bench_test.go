package redpacket_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

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
