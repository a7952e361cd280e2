package recent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/recent"
)

func Example() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	views, err := recent.New(client, recent.Config{Key: "recent:alice", Max: 3, TTL: 30 * 24 * time.Hour})
	if err != nil {
		panic(err)
	}
	for _, page := range []string{"/a", "/b", "/c", "/a", "/d"} {
		if err := views.Add(ctx, page); err != nil {
			panic(err)
		}
	}
	items, err := views.Items(ctx, 0, 10)
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		fmt.Println(it.Value)
	}
	// Output:
	// /d
	// /a
	// /c
}

// Remove takes values out of a list and says how many were in it; an
// item older than MaxAge, by the server's clock, is no longer read.
func ExampleList_Remove() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	mr.SetTime(start) // a clock that stands still
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	searches, err := recent.New(client, recent.Config{Key: "searches:bob", Max: 10, MaxAge: time.Hour})
	if err != nil {
		panic(err)
	}
	if err := searches.Add(ctx, "red shoes", "blue hat", "green scarf"); err != nil {
		panic(err)
	}
	removed, err := searches.Remove(ctx, "blue hat", "never searched")
	if err != nil {
		panic(err)
	}
	n, err := searches.Len(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("removed", removed, "left", n)

	mr.SetTime(start.Add(50 * time.Minute))
	if err := searches.Add(ctx, "yellow socks"); err != nil {
		panic(err)
	}
	mr.SetTime(start.Add(70 * time.Minute)) // the first searches are over an hour old
	items, err := searches.Items(ctx, 0, 10)
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		fmt.Println(it.Value, it.At.UTC().Format(time.TimeOnly))
	}

	// Output:
	// removed 1 left 2
	// yellow socks 12:50:00
}
