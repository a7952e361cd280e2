package notice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/notice"
)

// parse reads a test notice, 'name:anything'.
func parse(payload string) (name string, ok bool) {
	name, _, ok = strings.Cut(payload, ":")
	return name, ok
}

// everyNotice is a match that accepts every notice.
func everyNotice(string) bool { return true }

// newChannel returns a channel name no other test uses.
func newChannel() string {
	return "notice-test:" + randomHex()
}

// joinReady joins name on channel at s, expecting every notice for name,
// and waits until the channel is subscribed. The wake-up of the
// confirmation, if any, is taken.
func joinReady(ctx context.Context, s *notice.Site, channel, name string) (*notice.Waiter, error) {
	w := s.Join(channel, name, parse)
	w.Expect(everyNotice)
	for !w.Ready() {
		if err := ctx.Err(); err != nil {
			w.Leave()
			return nil, fmt.Errorf("%s not subscribed: %w", channel, err)
		}
		time.Sleep(time.Millisecond)
	}
	woken(w)
	return w, nil
}

// woken reports whether w has a wake-up pending, and takes it.
func woken(w *notice.Waiter) bool {
	select {
	case <-w.Wake():
		return true
	default:
		return false
	}
}

// awaitWake returns an error unless w wakes within d.
func awaitWake(w *notice.Waiter, d time.Duration) error {
	select {
	case <-w.Wake():
		return nil
	case <-time.After(d):
		return fmt.Errorf("not woken within %v", d)
	}
}

// arrived waits until payload is the last notice w has, or ctx ends.
func arrived(ctx context.Context, w *notice.Waiter, payload string) error {
	for last, _ := w.Last(); last != payload; last, _ = w.Last() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("notice %q did not arrive: %w", payload, err)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// roundTrip has a waiter join channel at s, subscribe, be woken by a
// notice that client publishes, and leave. It returns the hub the waiter
// joined.
func roundTrip(ctx context.Context, client redis.UniversalClient, s *notice.Site, channel string) (*notice.Hub, error) {
	w, err := joinReady(ctx, s, channel, "waiter")
	if err != nil {
		return nil, err
	}
	defer w.Leave()
	if err := publish(ctx, client, channel, "waiter:"+randomHex()); err != nil {
		return nil, err
	}
	if err := awaitWake(w, 3*time.Second); err != nil {
		return nil, errors.New("waiter: " + err.Error())
	}
	return w.Hub(), nil
}
