package delayqueue_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/delayqueue"
)

// BenchmarkPushWithID measures Push with the caller's ID, each new, which
// also keeps the push's token beside the message, beside BenchmarkPush.
func BenchmarkPushWithID(b *testing.B) {
	ctx := context.Background()
	payload := make([]byte, 64)
	q, _ := benchQueue(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := q.Push(ctx, payload, time.Hour, delayqueue.WithID("order-"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}
