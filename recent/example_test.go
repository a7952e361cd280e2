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
