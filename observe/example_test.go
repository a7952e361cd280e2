package observe_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// counting is an Observer that counts each call's final outcome by kind.
type counting map[observe.Kind]int

func (c counting) Observe(_ context.Context, e observe.Event) {
	if e.Kind.Final() {
		c[e.Kind]++
	}
}

// An Observer is any type with an Observe method. Set it on a primitive's
// Config.Observer; every package reports to the same interface.
func Example() {
	c := counting{}
	var obs observe.Observer = c
	ctx := context.Background()
	obs.Observe(ctx, observe.Event{Kind: observe.Waited, Package: "slotlimit", Op: "Acquire"})
	obs.Observe(ctx, observe.Event{Kind: observe.Acquired, Package: "slotlimit", Op: "Acquire"})
	obs.Observe(ctx, observe.Event{Kind: observe.Done, Package: "delayqueue", Op: "Push"})
	fmt.Println(c[observe.Acquired], c[observe.Done], c[observe.Waited])
	// Output: 1 1 0
}

// Slog logs failed calls and lost leases at Warn, the rest at Debug.
func ExampleSlog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a stable output
			}
			return a
		},
	}))
	obs := observe.Slog(logger)
	obs.Observe(context.Background(), observe.Event{
		Kind: observe.Error, Package: "lock", Op: "Unlock", Key: "jobs:nightly",
		InUse: -1, Duration: 2 * time.Millisecond, Err: errors.New("i/o timeout"),
	})
	// Output: level=WARN msg="lock: error" package=lock key=jobs:nightly holder="" op=Unlock duration=2ms error="i/o timeout"
}
