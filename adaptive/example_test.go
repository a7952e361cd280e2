package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/adaptive"
)

// exampleRedis starts an in-process Redis at a fixed time, so the examples'
// output does not depend on the clock. Real code passes its own client.
func exampleRedis() (*redis.Client, *miniredis.Miniredis) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	mr.SetTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	return redis.NewClient(&redis.Options{Addr: mr.Addr()}), mr
}

// errOverloaded stands for what a system says when it is over capacity:
// a refusal, a 429 or 503, a timeout.
var errOverloaded = errors.New("503 service unavailable")

// Every instance of a service calls a payment gateway through one shared
// adaptive limit: each call takes a slot, and reports how the call went as
// it frees it.
func Example() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := adaptive.New(client, adaptive.Config{Key: "gateway", Min: 1, Max: 50, Initial: 4})
	if err != nil {
		panic(err)
	}
	charge := func(ctx context.Context, order int) error {
		if order == 3 {
			return errOverloaded
		}
		return nil
	}

	for order := range 4 {
		slot, err := limiter.Acquire(ctx) // waits for a slot; TryAcquire never does
		if err != nil {
			panic(err)
		}
		err = charge(ctx, order)
		switch {
		case err == nil:
			err = slot.Success(ctx)
		case errors.Is(err, errOverloaded):
			err = slot.Dropped(ctx)
		default:
			err = slot.Ignore(ctx)
		}
		if err != nil {
			panic(err)
		}
		limit, err := limiter.Limit(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Printf("order %d: limit %d\n", order, limit)
	}

	// Output:
	// order 0: limit 4
	// order 1: limit 4
	// order 2: limit 4
	// order 3: limit 3
}

// The limit grows while it is nearly in use and calls succeed, one step a
// window at most; a drop shrinks it by the factor.
func Example_growAndShrink() {
	client, mr := exampleRedis()
	defer mr.Close()
	ctx := context.Background()

	limiter, err := adaptive.New(client, adaptive.Config{Key: "model-server", Min: 1, Max: 20, Initial: 10})
	if err != nil {
		panic(err)
	}
	var slots []*adaptive.Slot
	for range 10 {
		slot, err := limiter.TryAcquire(ctx)
		if err != nil {
			panic(err)
		}
		slots = append(slots, slot)
	}
	if _, err := limiter.TryAcquire(ctx); errors.Is(err, adaptive.ErrLimited) {
		fmt.Println("10 of 10 in use: limited")
	}

	slots[0].Success(ctx) // the limit was in use: it grows by a step
	limit, _ := limiter.Limit(ctx)
	fmt.Println("after a success:", limit)

	mr.SetTime(time.Date(2026, 1, 1, 12, 0, 1, 0, time.UTC)) // a window later
	slots[1].Dropped(ctx)
	slots[2].Dropped(ctx) // the same overload: counts once
	limit, _ = limiter.Limit(ctx)
	fmt.Println("after two drops:", limit)

	info, err := limiter.Inspect(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d of %d in use\n", info.InUse, info.Limit)
	for _, slot := range slots[3:] {
		slot.Ignore(ctx)
	}

	// Output:
	// 10 of 10 in use: limited
	// after a success: 11
	// after two drops: 9
	// 7 of 9 in use
}
