package main_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/lock"
)

// cutProxy returns the URL of a proxy to the Redis at url that loses the
// reply to the first command whose bytes hold every one of words, after
// the server ran it: the command's go-redis client, with its default
// retries, then sends it again, so it runs twice while the command sees
// one call. cuts counts the replies lost.
func cutProxy(t *testing.T, url string, words ...string) (proxy string, cuts *atomic.Int32) {
	t.Helper()
	server := strings.TrimPrefix(url, "redis://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var armed atomic.Bool
	armed.Store(true)
	cuts = new(atomic.Int32)
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			srv, err := net.Dial("tcp", server)
			if err != nil {
				client.Close()
				continue
			}
			var cut atomic.Bool // the reply to the last command is to be lost
			go func() {
				defer srv.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := client.Read(buf)
					if err != nil {
						return
					}
					if matches(buf[:n], words) && armed.CompareAndSwap(true, false) {
						cut.Store(true)
					}
					if _, err := srv.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
			go func() {
				defer client.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := srv.Read(buf)
					if err != nil {
						return
					}
					if cut.Load() {
						cuts.Add(1)
						srv.Close()
						return
					}
					if _, err := client.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "redis://" + ln.Addr().String(), cuts
}

func matches(p []byte, words []string) bool {
	for _, w := range words {
		if !bytes.Contains(p, []byte(w)) {
			return false
		}
	}
	return true
}

// A release whose reply was lost, and which the command's client sent
// again, frees the holder once, hands its units on once, and reports the
// release, as its first run would have.
func TestResentReleaseReportsReleased(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	l, err := slotlimit.New(client, slotlimit.Config{Key: key, Limit: 2, TTL: time.Minute})
	require.NoError(t, err)
	for _, h := range []string{"h1", "h2"} {
		_, err := l.TryAcquire(ctx, h)
		require.NoError(t, err)
	}
	_, err = l.ReleaseBatch(ctx, []string{"absent"}) // loads the release script
	require.NoError(t, err)
	proxy, cuts := cutProxy(t, url, "evalsha", key, "h1")
	r := cli(t, "", nil, "-u", proxy, "release", "-limit", "2", key, "h1")
	assert.Equal(t, int32(1), cuts.Load(), "the reply was lost")
	assert.Equal(t, 0, r.code, "released, as the first run answered")
	assert.Contains(t, r.stdout, "released h1 on "+key)
	hs, err := l.Holders(ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1, "h2 keeps its slot")
	assert.Equal(t, "h2", hs[0].ID)
	client.Del(ctx, key)
}

// A lock break whose reply was lost, and which the command's client sent
// again, frees the lock once and reports it broken.
func TestResentLockBreakReportsBroken(t *testing.T) {
	url, client := server(t)
	ctx := context.Background()
	key := testKey(t, "cli-test:")
	m, err := lock.New(client, lock.Config{Key: key, TTL: time.Minute})
	require.NoError(t, err)
	held, err := m.TryLock(ctx)
	require.NoError(t, err)
	err = m.Break(ctx, "not-the-owner") // loads the break script
	require.ErrorIs(t, err, lock.ErrNotHeld)
	proxy, cuts := cutProxy(t, url, "evalsha", key, held.Token())
	r := cli(t, "", nil, "-u", proxy, "lock", "break", "-yes", key)
	assert.Equal(t, int32(1), cuts.Load(), "the reply was lost")
	assert.Equal(t, 0, r.code, "broken, as the first run answered")
	n, err := client.Exists(ctx, key).Result()
	require.NoError(t, err)
	assert.Zero(t, n)
	client.Del(ctx, key)
}
