package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/lock"
)

// The commands of package lock: lock info and lock break.

func breakFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.yes, "yes", false, "break the lock without asking")
}

// mutex returns a Mutex on key. Its TTL is the default and plays no part:
// Inspect reads, and Break hands the lock on with the lease time the
// waiter asked for.
func mutex(client redis.UniversalClient, key string) (*lock.Mutex, error) {
	return lock.New(client, lock.Config{Key: key})
}

// readLock reads the lock at key with Mutex.Inspect, which writes
// nothing: the commands, ls and the page show what it returns.
func readLock(ctx context.Context, client redis.UniversalClient, key string) (*lock.Mutex, lock.Info, error) {
	m, err := mutex(client, key)
	if err != nil {
		return nil, lock.Info{}, err
	}
	info, err := m.Inspect(ctx)
	return m, info, err
}

func (c *cli) lockInfo(m *lock.Mutex) (lock.Info, error) {
	ctx, cancel := c.call()
	defer cancel()
	return m.Inspect(ctx)
}

// breakLock breaks the lock with m.Break, which frees it as its owner's
// Unlock would, handing it to the first waiter, if it is still held under
// token, the owner read before. It reports false, with the answer to
// show, when the lock changed hands or lapsed meanwhile: then it is left
// alone.
func breakLock(ctx context.Context, m *lock.Mutex, token string) (bool, string, error) {
	err := m.Break(ctx, token)
	if errors.Is(err, lock.ErrNotHeld) {
		return false, fmt.Sprintf("lock %s changed hands or lapsed before the break: nothing done", m.Config().Key), nil
	}
	return err == nil, "", err
}

// lockFree is the answer of a break that finds the lock free.
func lockFree(key string) string {
	return fmt.Sprintf("lock %s is free: nothing to break", key)
}

type lockJSON struct {
	Key        string `json:"key"`
	Held       bool   `json:"held"`
	Token      string `json:"token"`   // "" when free
	Owner      string `json:"owner"`   // the owner's description; "" when free or unknown
	TTLMillis  int64  `json:"ttl_ms"`  // 0 when free, -1 when the key has no expiry
	Waiters    int64  `json:"waiters"` // callers of Lock queued for it
	FenceFloor int64  `json:"fence_floor"`
}

func newLockJSON(key string, info lock.Info) lockJSON {
	out := lockJSON{Key: key, Held: info.Held(), Token: info.Token, Owner: info.Owner, Waiters: info.Waiters, FenceFloor: info.FenceFloor}
	switch {
	case info.TTL < 0:
		out.TTLMillis = -1
	default:
		out.TTLMillis = info.TTL.Milliseconds()
	}
	return out
}

// ttl formats the time left on a lock's lease.
func ttl(d time.Duration) string {
	if d < 0 {
		return "no expiry: it never lapses"
	}
	return left(d)
}

// runLockInfo prints the owner's token and description, the time left
// on its lease, the waiters and the fence floor. A free lock is the
// answer no: after the table, it says "no lock held at KEY". A key that
// the records beside it give to a Counter or a fixed window is refused in
// words (cli.refuseClaimed).
func runLockInfo(c *cli, args []string) error {
	key := args[0]
	ctx, cancel := c.call()
	defer cancel()
	_, info, err := readLock(ctx, c.client, key)
	if err != nil {
		return err
	}
	if err := c.refuseClaimed(kindLock, key); err != nil {
		return err
	}
	if c.json {
		err = c.writeJSON(newLockJSON(key, info))
	} else {
		t := newTable(c.stdout, "LOCK", key)
		if info.Held() {
			t.row("state", "held")
			t.row("owner token", display(info.Token))
			owner := "unknown (a token that another client wrote, or a description that lapsed)"
			if info.Owner != "" {
				owner = ownerText(info.Owner)
			}
			t.row("owner", owner)
			t.row("time left", ttl(info.TTL))
		} else {
			t.row("state", "free")
		}
		t.row("waiting", info.Waiters)
		floor := "every later owner's fence is higher (fences are not stored)"
		if info.Held() {
			floor = "the owner's fence is at most this, every later owner's higher (fences are not stored)"
		}
		t.row("fence floor", fmt.Sprintf("%d µs, the server's clock now: %s", info.FenceFloor, floor))
		t.flush()
	}
	if err == nil && !info.Held() {
		return c.none("lock held", key)
	}
	return err
}

// runLockBreak breaks the lock with Mutex.Break, which frees it as its
// owner's Unlock would, handing it to the first waiter. It names the
// owner it read, so a lock that changed hands meanwhile is left alone.
// A key that the records beside it give to a Counter or a fixed window
// is refused in words, and left alone (cli.refuseClaimed), before
// anything is asked or written: breaking it would delete their count.
func runLockBreak(c *cli, args []string) error {
	key := args[0]
	ctx, cancel := c.call()
	m, info, err := readLock(ctx, c.client, key)
	cancel()
	if err != nil {
		return err
	}
	if err := c.refuseClaimed(kindLock, key); err != nil {
		return err
	}
	out := breakJSON{Key: key, Token: info.Token}
	if !info.Held() {
		return c.breakAnswer(out, lockFree(key))
	}
	if !c.yes {
		waiting := "nobody waits: the lock will be free"
		if info.Waiters > 0 {
			waiting = fmt.Sprintf("%d waiting: the first is handed the lock", info.Waiters)
		}
		if !c.confirm(fmt.Sprintf("break lock %s, held by %s (time left %s; %s)?", key, display(info.Token), ttl(info.TTL), waiting)) {
			out.Declined = true
			return c.breakAnswer(out, fmt.Sprintf("lock %s not broken", key))
		}
	}
	ctx, cancel = c.call()
	defer cancel()
	broken, msg, err := breakLock(ctx, m, info.Token)
	if err != nil {
		return err
	}
	if !broken {
		return c.breakAnswer(out, msg)
	}
	out.Broken = true
	after, err := c.lockInfo(m)
	if err != nil {
		return err
	}
	if after.Held() {
		out.NewOwner = after.Token
	}
	if c.json {
		return c.writeJSON(out)
	}
	fmt.Fprintf(c.stdout, "broke lock %s, held by %s\n", key, display(info.Token))
	if out.NewOwner != "" {
		fmt.Fprintf(c.stdout, "now held by %s\n", display(out.NewOwner))
	} else {
		fmt.Fprintln(c.stdout, "now free")
	}
	return nil
}

type breakJSON struct {
	Key      string `json:"key"`
	Token    string `json:"token"` // the owner it broke, or meant to
	Broken   bool   `json:"broken"`
	Declined bool   `json:"declined,omitempty"`
	NewOwner string `json:"new_owner"` // the waiter handed the lock, or the owner since; "" when free
}

// breakAnswer prints a break that did nothing, and returns errNo.
func (c *cli) breakAnswer(out breakJSON, msg string) error {
	if c.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.stdout, msg)
	}
	return errNo
}
