package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/hashtag"
)

// Three primitives keep a plain string at the key itself: a Counter its
// count, a fixed window its count, a lock its owner's token. A string
// alone does not tell them apart, and a command of one, given the key of
// another, would read its string as its own and could delete it (a lock
// break, a rate reset). The records that their packages keep beside their
// keys tell them apart: a Counter's settings record ("{k}/limit", with a
// limit and no lease), a rate limit's rate record ("{k}/ratelimit:rate",
// whose algorithm is fixed-window) and a lock owner's record
// ("{k}/lock:owner:ID", ID being the first idLen characters of the
// token).

// idLen is the length of the handle ID with which a lock's tokens begin,
// and which names its owner's record (package lock's idLen).
const idLen = 10

// A claim is what the records beside a key say of the key itself.
type claim struct {
	kind  string // kindCounter, kindRate (a fixed window's count), kindLock, or "" when no record claims the key
	typ   string // the key's Redis type ("none", "string", "list", ...); "" when not read
	count bool   // the key holds a string that is an integer, as a count does
	gcra  bool   // a GCRA limit keeps its time beside the key ("{k}/ratelimit")
	limit int64  // a Counter's recorded limit
}

// readClaim reads which primitive of this module the records beside key
// give key to (see claim), and the key's type. It writes nothing. A read
// that Redis refused (a user not granted the names beside key, say) is
// taken as no record; an error of the connection is returned.
func readClaim(ctx context.Context, client redis.UniversalClient, key string) (claim, error) {
	// A key with a '}' but no hash tag has no names beside it, and so no
	// records: its type and value alone are read.
	prefix, side := hashtag.SidePrefix(key)
	var typ, gcra *redis.StatusCmd
	var value, limitRec, rateRec *redis.StringCmd
	// Each command's own error is read below.
	_, _ = client.Pipelined(ctx, func(p redis.Pipeliner) error {
		typ = p.Type(ctx, key)
		value = p.Get(ctx, key)
		if side {
			limitRec = p.Get(ctx, prefix+"limit")
			rateRec = p.Get(ctx, prefix+"ratelimit:rate")
			gcra = p.Type(ctx, prefix+"ratelimit")
		}
		return nil
	})
	cmds := []redis.Cmder{typ, value}
	if side {
		cmds = append(cmds, limitRec, rateRec, gcra)
	}
	for _, cmd := range cmds {
		if err := replyErr(cmd.Err()); err != nil {
			return claim{}, err
		}
	}
	cl := claim{typ: typ.Val(), count: typ.Val() == "string" && isCount(value.Val())}
	if !side {
		return cl, nil
	}
	cl.gcra = gcra.Val() != "" && gcra.Val() != "none"
	if cl.typ != "string" && cl.typ != "none" {
		return cl, nil
	}
	if rec := parseRecord(limitRec); !rec.Has("lease") {
		if n, ok := recordInt(rec, "limit"); ok && n > 0 {
			cl.kind, cl.limit = kindCounter, n
			return cl, nil
		}
	}
	if rec := parseRecord(rateRec); rec.Get("algorithm") == "fixed-window" {
		cl.kind = kindRate
		return cl, nil
	}
	if token := value.Val(); cl.typ == "string" && len(token) >= idLen {
		owner, err := client.Get(ctx, prefix+"lock:owner:"+token[:idLen]).Result()
		if err := replyErr(err); err != nil {
			return claim{}, err
		}
		if rec, _ := url.ParseQuery(owner); rec.Has("owner") {
			cl.kind = kindLock
		}
	}
	return cl, nil
}

// replyErr returns err unless Redis answered it (a missing key, a refusal,
// another type): nil then.
func replyErr(err error) error {
	if err == nil || errors.As(err, new(redis.Error)) {
		return nil
	}
	return err
}

// isCount reports whether s is an integer as a fixed window's count is:
// an optional '-', then digits.
func isCount(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// claimed returns the words for a key that the records beside it give to
// a primitive of kind cl.kind, named to a command of kind (not cl.kind),
// with the command that shows it.
func claimed(cl claim, kind, key string) string {
	switch cl.kind {
	case kindCounter:
		return fmt.Sprintf("%s holds a counter, not %s %s (count %s shows it)", display(key), article(kind), kind, display(key))
	case kindRate:
		return fmt.Sprintf("%s holds a rate limit's count, not %s %s (rate show %s shows it)", display(key), article(kind), kind, display(key))
	case kindLock:
		return fmt.Sprintf("%s holds a lock, not %s %s (lock info %s shows it)", display(key), article(kind), kind, display(key))
	}
	return ""
}

// refuseClaimed answers a command of kind given a key that the records
// beside it give to a primitive of another kind: it says so on stderr
// and ends the command with exit code 1, before the command writes
// anything. It returns nil for a key they give to none, or
// to kind.
func (c *cli) refuseClaimed(kind, key string) error {
	ctx, cancel := c.call()
	defer cancel()
	words, err := claimedWords(ctx, c.client, kind, key)
	if err != nil || words == "" {
		return err
	}
	fmt.Fprintln(c.stderr, words)
	return errNo
}

// claimedWords reads the records beside key (readClaim) and, when they
// give key to a primitive of another kind than kind, returns the words
// that say so (claimed); "" when they give it to none, or to kind.
func claimedWords(ctx context.Context, client redis.UniversalClient, kind, key string) (string, error) {
	cl, err := readClaim(ctx, client, key)
	if err != nil || cl.kind == "" || cl.kind == kind {
		return "", err
	}
	return claimed(cl, kind, key), nil
}
