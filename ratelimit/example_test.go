package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/ratelimit"
)

func ExampleLimiter_Allow() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	mr.SetTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) // a clock that stands still
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()

	limiter, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		panic(err)
	}
	limit := ratelimit.Limit{Rate: 1, Period: 3 * time.Minute, Burst: 2}
	for range 3 {
		res, err := limiter.Allow(context.Background(), "user:42", limit)
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter)
	}
	fmt.Println(limit)
	// Output:
	// true 1 0s
	// true 0 0s
	// false 0 3m0s
	// 1 per 3m0s (burst 2, gcra)
}

func ExampleLimiter_AllowAll() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()

	limiter, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		panic(err)
	}
	rules := []ratelimit.Rule{
		{Key: "{tenant:7}:user:42", Limit: ratelimit.PerSecond(10)},
		{Key: "{tenant:7}", Limit: ratelimit.PerMinute(1000)}, // one hash tag: one slot
	}
	results, err := limiter.AllowAll(context.Background(), rules)
	if err != nil {
		panic(err)
	}
	fmt.Println(results.Allowed(), results[0].Remaining, results[1].Remaining)
	// Output: true 9 999
}
