package record

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestDueOncePerEvery(t *testing.T) {
	var m Memo
	if !m.Due("k") {
		t.Fatal("first Due = false, want true")
	}
	if m.Due("k") {
		t.Fatal("second Due within Every = true, want false")
	}
	if !m.Due("other") {
		t.Fatal("Due of another key = false, want true")
	}
	m.Forget("k")
	if !m.Due("k") {
		t.Fatal("Due after Forget = false, want true")
	}
	m.last["k"] = time.Now().Add(-Every)
	if !m.Due("k") {
		t.Fatal("Due after Every = false, want true")
	}
}

func TestMemoForgetsAllPastMaxKeys(t *testing.T) {
	var m Memo
	for i := range maxKeys {
		m.Due(strconv.Itoa(i))
	}
	if !m.Due("one more") {
		t.Fatal("Due of a new key = false")
	}
	if len(m.last) != 1 {
		t.Fatalf("memo holds %d keys past maxKeys, want 1", len(m.last))
	}
	if !m.Due("0") {
		t.Fatal("a forgotten key is not due again")
	}
}

func TestWriteThenRead(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	ctx := context.Background()
	var m Memo
	if err := m.Write(ctx, rdb, "{k}/limit", url.Values{"limit": {"60"}}, TTL(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := mr.TTL("{k}/limit"); got != Every+5*time.Second {
		t.Fatalf("TTL = %v, want %v", got, Every+5*time.Second)
	}
	mr.Set("{k}/limit", "limit=61")
	if err := m.Write(ctx, rdb, "{k}/limit", url.Values{"limit": {"60"}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := Read(ctx, rdb, "{k}/limit")
	if err != nil || got.Get("limit") != "61" {
		t.Fatalf("Read = %v, %v; a write within Every must send nothing", got, err)
	}
	if got, err := Read(ctx, rdb, "{none}/limit"); got != nil || err != nil {
		t.Fatalf("Read of no record = %v, %v; want nil, nil", got, err)
	}
}

// A write refused by Redis (an ACL without the record's key) waits its
// turn, so that it costs one command a minute, not one a call.
func TestRefusedWriteWaitsItsTurn(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	ctx := context.Background()
	mr.SetError("NOPERM this user has no permissions to access the 'k' key")
	var m Memo
	if err := m.Write(ctx, rdb, "k", url.Values{"a": {"1"}}, time.Minute); err == nil {
		t.Fatal("a refused Write returned nil")
	}
	if m.Due("k") {
		t.Fatal("a refused write is due again at once")
	}
}

func TestFailedWriteIsDueAgain(t *testing.T) {
	mr := miniredis.RunT(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx := context.Background()
	var m Memo
	if err := m.Write(ctx, redis.NewClient(&redis.Options{Addr: down, MaxRetries: -1}), "k", url.Values{"a": {"1"}}, time.Minute); err == nil {
		t.Fatal("Write to a Redis that is down returned nil")
	}
	if m.Due("k") {
		t.Fatal("a write that did not reach Redis is due again at once")
	}
	m.last["k"] = m.last["k"].Add(-Retry)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1})
	if err := m.Write(ctx, rdb, "k", url.Values{"a": {"1"}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, _ := mr.Get("k"); v != "a=1" {
		t.Fatalf("record = %q after the retry, want a=1", v)
	}
	if _, err := Read(ctx, rdb, "missing"); errors.Is(err, redis.Nil) {
		t.Fatal("Read returned redis.Nil")
	}
}

// replyError is an error reply of Redis, as go-redis returns it.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// Refused tells Redis's ACL refusal of a command that then ran nothing
// from every other error, in the words of the Redis releases that give
// them: one raised inside a script, after it may have written, is never
// one.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{replyError("NOPERM this user has no permissions to access one of the keys used as arguments"), true}, // EVALSHA's key check, MULTI's queued command, Redis 6 and 7.0
		{replyError("NOPERM No permissions to access a key"), true},                                           // Redis 7.2 on
		{replyError("NOPERM this user has no permissions to run the 'evalsha' command"), true},
		{fmt.Errorf("wrapped: %w", replyError("NOPERM No permissions to access a key")), true},
		{replyError("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: 3097d4, on @user_script:1."), false},
		{replyError("ERR ACL failure in script: No permissions to access a key script: 3097d4, on @user_script:1."), false},
		{replyError("NOPERM No permissions to access a key script: 3097d4, on @user_script:1."), false},
		{replyError("EXECABORT Transaction discarded because of previous errors."), false},
		{replyError("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{errors.New("NOPERM not from Redis"), false},
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := Refused(c.err); got != c.want {
			t.Errorf("Refused(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Failed makes a record due again Retry after a write that did not
// reach Redis, and leaves one that Redis answered to wait its turn.
func TestFailedKeepsRefusals(t *testing.T) {
	for _, c := range []struct {
		err error
		due bool // Retry after the failure
	}{
		{nil, false},
		{replyError("NOPERM No permissions to access a key"), false},
		{&net.OpError{Op: "read", Err: errors.New("reset")}, true},
		{context.Canceled, true},
	} {
		var m Memo
		m.Due("k")
		m.Failed("k", c.err)
		if m.Due("k") {
			t.Errorf("after Failed(%v), Due at once = true, want false", c.err)
		}
		m.last["k"] = m.last["k"].Add(-Retry)
		if got := m.Due("k"); got != c.due {
			t.Errorf("Retry after Failed(%v), Due = %v, want %v", c.err, got, c.due)
		}
	}
}

// Carried sends a call again without its record only after a refusal that
// ran nothing, which then waits its turn; any other error makes the
// record due at the next call.
func TestCarried(t *testing.T) {
	var m Memo
	m.Due("k")
	if !m.Carried("k", replyError("NOPERM this user has no permissions to access one of the keys used as arguments")) {
		t.Fatal("Carried(NOPERM) = false, want true: send again without the record")
	}
	if m.Due("k") {
		t.Fatal("a refused record is due again at once")
	}
	if m.Carried("k", context.DeadlineExceeded) {
		t.Fatal("Carried(deadline) = true, want false")
	}
	if !m.Due("k") {
		t.Fatal("a record whose call failed is not due at the next call")
	}
}
