package lock

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/record"
)

// MaxOwner is the longest Config.Owner, in bytes.
const MaxOwner = 200

// This file keeps the owner description (Config.Owner) beside the lock,
// without a command of its own on any call:
//
// Each Mutex has a handle ID, 10 random characters of base32, and every
// token it makes begins with it: the ID, then 16 random characters of
// base32 (80 bits) of the token's own, 26 characters in all, as tokens
// have always been. The Mutex keeps its description at
// "{k}/lock:owner:ID" beside a key k ("{t}:x:lock:owner:ID" beside
// "{t}:x"), a record (see internal/record) of one field, owner. It writes
// it at most once per record.Every, inside a call it makes anyway: the
// MULTI of TryLock, a waiter's try (obtain_queued.lua) or a refresh
// (refresh.lua), whichever comes first once it is due, so that no call
// takes a round trip more. The record expires record.Every plus the lease
// time after it was written, so that it outlives every lease the Mutex's
// Locks take or renew before the next write is due. A reader takes the
// ID from the owner's token and reads the record at that name; a token
// not made by a Mutex (redislock's, redsync's, a classic script's) has no
// record, and its owner is unknown.

// idLen is the length of a handle ID, the first characters of each token
// of its Mutex.
const idLen = 10

// ownerSide is the name beside the lock's key, before the handle ID, of
// a Mutex's owner record.
const ownerSide = sidePrefix + "owner:"

// ownerField is the owner record's field that holds the description.
const ownerField = "owner"

// newHandleID returns a random handle ID: 50 bits, as 10 characters of
// base32.
func newHandleID() string {
	return rand.Text()[:idLen]
}

// newToken returns a new owner token of the Mutex: its handle ID and 80
// random bits, as 26 characters of base32.
func (m *Mutex) newToken() string {
	return m.id + rand.Text()[:26-idLen]
}

// defaultOwner is the description of a Mutex whose Config.Owner is
// empty: the host's name and the process ID, as "web-3 pid 4242".
func defaultOwner() string {
	pid := "pid " + strconv.Itoa(os.Getpid())
	host, err := os.Hostname()
	if err != nil || host == "" {
		return pid
	}
	if owner := host + " " + pid; checkOwner(owner) == "" {
		return owner
	}
	return pid
}

// checkOwner returns why owner cannot be a Config.Owner, or "".
func checkOwner(owner string) string {
	switch {
	case len(owner) > MaxOwner:
		return "is " + strconv.Itoa(len(owner)) + " bytes, at most " + strconv.Itoa(MaxOwner)
	case !utf8.ValidString(owner):
		return "is not valid UTF-8"
	case strings.IndexFunc(owner, unicode.IsControl) >= 0:
		return "holds a control character"
	}
	return ""
}

// ownerKey returns the name of the owner record of the Mutex whose handle
// ID begins token, beside key, or "" when token was not made by a Mutex
// (it is not 26 characters of base32) or key has no names beside it.
func ownerKey(key, token string) string {
	if len(token) != 26 || strings.Trim(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		return ""
	}
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return ""
	}
	return prefix + ownerSide + token[:idLen]
}

// ownerDue reports whether the Mutex's owner record is due to be written
// by the call about to be sent, and counts it written if so; a call that
// fails calls ownerFailed.
func (m *Mutex) ownerDue() bool {
	return m.memo.Due(m.ownerKey)
}

// ownerFailed makes the owner record due again, after the call that was
// to write it failed.
func (m *Mutex) ownerFailed() {
	m.memo.Forget(m.ownerKey)
}

// readOwner returns the description of the owner whose token is token,
// or "" when it is unknown: the token was not made by a Mutex, or its
// record lapsed.
func (m *Mutex) readOwner(ctx context.Context, token string) (string, error) {
	name := ownerKey(m.base.Key, token)
	if name == "" {
		return "", nil
	}
	fields, err := record.Read(ctx, m.base.Client, name)
	switch {
	case fields != nil: // a string was read, a record or not
		return fields.Get(ownerField), nil
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		return "", nil // a value of another type, which no Mutex wrote
	}
	return "", err
}

// ownerRecord is the owner record's value for owner.
func ownerRecord(owner string) string {
	return url.Values{ownerField: {owner}}.Encode()
}
