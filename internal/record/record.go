// Package record keeps, beside a primitive's data in Redis, the settings
// that describe it (a limiter's limit, a rate limit's rate, a list's
// bounds), so that an operator can read them without being told.
//
// A record is a string of URL query form, "limit=60&lease=5s", at a key
// beside the primitive's data. It is written seldom: a handle writes the
// record of a key at most once per Every, with one SET, never on every
// call, and the record expires Every plus the longest the data can
// outlive a call after that write. So while calls go on, it outlives the
// data it describes, and it lapses at most Every after the data does once
// they stop.
package record

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Every is how often a handle writes a key's record while it is used.
const Every = time.Minute

// Retry is how soon a handle tries again to write a record whose write
// did not reach Redis (a Redis down or hung): soon, but not before every
// call, so that a call to a Redis that does not answer waits out its own
// command alone.
const Retry = 5 * time.Second

// maxKeys bounds the keys a Memo remembers. A handle used on more keys
// than this forgets them all at once and writes each record again on the
// key's next call.
const maxKeys = 4096

// A Memo remembers when its handle last wrote each key's record. The zero
// value is ready to use and safe for concurrent use.
type Memo struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// Due reports whether key's record is due to be written, and if so counts
// it written now, so that concurrent callers write it once. A caller that
// writes the record itself passes the write's error to Failed.
func (m *Memo) Due(key string) bool {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if at, ok := m.last[key]; ok && now.Sub(at) < Every {
		return false
	}
	if m.last == nil || len(m.last) >= maxKeys {
		m.last = make(map[string]time.Time)
	}
	m.last[key] = now
	return true
}

// Forget makes key's record due at once.
func (m *Memo) Forget(key string) {
	m.mu.Lock()
	delete(m.last, key)
	m.mu.Unlock()
}

// retryLater makes key's record due again Retry from now.
func (m *Memo) retryLater(key string) {
	m.mu.Lock()
	if _, ok := m.last[key]; ok {
		m.last[key] = time.Now().Add(Retry - Every)
	}
	m.mu.Unlock()
}

// TTL is the expiry of a record written now for data that can outlive a
// call by outlive: Every plus outlive, at least a second.
func TTL(outlive time.Duration) time.Duration {
	return Every + max(outlive, time.Second)
}

// Write sets the record at key to fields, to expire after ttl, when m
// says it is due. A write that did not reach Redis is tried again Retry
// later; one that Redis refused (an ACL without the record's key, say)
// waits its turn, so that it costs one command a minute, not one a call. Either error is returned; callers that go on to
// their own command may ignore it, since that command meets the same
// Redis.
func (m *Memo) Write(ctx context.Context, rdb redis.Cmdable, key string, fields url.Values, ttl time.Duration) error {
	if !m.Due(key) {
		return nil
	}
	err := rdb.Set(ctx, key, fields.Encode(), ttl).Err()
	m.Failed(key, err)
	return err
}

// Failed takes the error of a command of its own that wrote key's record,
// nil when it succeeded: one that did not reach Redis makes the record
// due again, and one that Redis answered (refused) leaves it counted
// written, to wait its turn.
func (m *Memo) Failed(key string, err error) {
	if err != nil && !errors.As(err, new(redis.Error)) {
		m.retryLater(key)
	}
}

// Carried takes err, the error of a call that carried key's record
// beside its own work, and reports whether to send the call again at once
// without the record: when Redis refused it before it ran anything
// (Refused), and the record then waits its turn. After any other error the
// record is due again at the next call, which carries it at no cost of its
// own.
func (m *Memo) Carried(key string, err error) (again bool) {
	if Refused(err) {
		return true
	}
	m.Forget(key)
	return false
}

// Refused reports whether err is Redis's refusal, under its ACL, of a
// command that then ran nothing: the NOPERM of a command itself, as
// EVALSHA's check of the keys it names, or of a command queued in a
// MULTI (the EXEC then answers EXECABORT, and nothing queued runs). A
// call that carried a record beside its own work and was refused so is
// sent again at once without the record: the user may lack only the
// record's key. An error raised inside a script, after it may have
// written, is never one: Redis reports it as "ERR ... script: ...".
func Refused(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := reply.Error()
	return strings.HasPrefix(msg, "NOPERM ") && !strings.Contains(msg, " script: ")
}

// Read returns the record at key, or nil and no error when there is none.
// A key that holds something other than a record is an error.
func Read(ctx context.Context, rdb redis.Cmdable, key string) (url.Values, error) {
	s, err := rdb.Get(ctx, key).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return url.ParseQuery(s)
}
