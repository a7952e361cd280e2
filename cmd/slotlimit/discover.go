package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/record"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/redpacket"
)

// This file finds the primitives that the packages keep in a Redis, for
// ls and web: discover SCANs every master for the key shapes the packages
// own, and reads each primitive found through its package's own calls.
// Nothing here writes.
//
// The API, for the commands that build on it:
//
//	discover(ctx, client, kind, pattern, each)  find and read, sorted
//	findPrimitives(ctx, client, kind, pattern, each)  find only (State empty)
//	describe(ctx, client, &f, each)  read one found primitive's state again
//	kinds, parseKind(s)  the kinds and the names -kind takes

// The kinds of primitive, as found.Kind names them and as the commands'
// answers do ("no KIND at KEY").
const (
	kindLimiter  = "limiter"        // slotlimit.Limiter
	kindCounter  = "counter"        // slotlimit.Counter
	kindLock     = "lock"           // lock.Mutex
	kindQueue    = "delay queue"    // delayqueue.Queue
	kindRecent   = "recent list"    // recent.List
	kindPacket   = "red packet"     // a redpacket.Store's packet
	kindRate     = "rate limit"     // a ratelimit.Limiter's key, GCRA or fixed window
	kindAdaptive = "adaptive limit" // adaptive.Limiter
)

// kinds lists every kind, in the order sorted output shows them.
var kinds = []string{kindAdaptive, kindCounter, kindQueue, kindLimiter, kindLock, kindRate, kindRecent, kindPacket}

// kindAliases are the other names -kind takes for a kind: the command
// group's name, and the kind with '-' for its space.
var kindAliases = map[string]string{
	"queue": kindQueue, "delayqueue": kindQueue, "delay-queue": kindQueue,
	"recent": kindRecent, "recent-list": kindRecent,
	"packet": kindPacket, "redpacket": kindPacket, "red-packet": kindPacket,
	"rate": kindRate, "ratelimit": kindRate, "rate-limit": kindRate,
	"adaptive": kindAdaptive, "adaptive-limit": kindAdaptive,
}

// parseKind returns the kind that s names (a kind, or an alias of one);
// "" for "" (every kind). Any other name is a usage error.
func parseKind(s string) (string, error) {
	if s == "" || slices.Contains(kinds, s) {
		return s, nil
	}
	if k, ok := kindAliases[s]; ok {
		return k, nil
	}
	return "", usageErrorf("-kind %q: one of limiter, counter, lock, queue, recent, packet, rate, adaptive", s)
}

// scanCount is the COUNT of each SCAN: the keys a master looks at per
// call, which bounds the time of each.
const scanCount = 1000

// readers is how many primitives discover reads at once.
const readers = 8

// A found is one primitive that discover found: its kind, the key its
// package is given, and its state in one line. A primitive is found once,
// whatever number of its keys matched.
type found struct {
	Kind string `json:"kind"` // one of kinds
	// Key is the key its package is given: Config.Key, or a rate limit's
	// key; a red packet's ID, which Prefix and Shard place.
	Key    string `json:"key"`
	Prefix string `json:"prefix,omitempty"` // a red packet's Store's Config.Prefix
	Shard  int    `json:"-"`                // a red packet's shard (below the Store's Config.Shards); see MarshalJSON

	// State is its state in one line, as ls shows it: "12 of 60 units in
	// use, 3 waiting". Empty until read.
	State string `json:"state"`

	// Figures are its state's numbers, by name, for plots and scripts; a
	// figure not known (a limit not recorded) is left out. Per kind:
	//   limiter: in_use, limit, holders, waiting
	//   counter: in_use, limit
	//   lock: held (0 or 1), ttl_ms (-1 for no expiry), waiting
	//   delay queue: ready, delayed, inflight, dead
	//   recent list: items, max, max_age_ms
	//   red packet: shares_left, shares, amount_left, amount, claims
	//   rate limit: remaining, rate, period_ms, burst, reset_after_ms
	//   adaptive limit: limit, in_use, waiting, min, max
	Figures map[string]int64 `json:"figures,omitempty"`

	// Error is why its state could not be read, if it could not; State
	// then says so too.
	Error string `json:"error,omitempty"`

	fullLimit int64  // a limiter's highest full marker seen by the SCAN
	node      string // the master whose SCAN found it first ("" for the one server)
}

// MarshalJSON gives f as ls -json lists it: its fields, and a red
// packet's shard, 0 included, after them; no other kind has a shard.
func (f found) MarshalJSON() ([]byte, error) {
	type fields found // found's fields, without this method
	var shard *int
	if f.Kind == kindPacket {
		shard = &f.Shard
	}
	return json.Marshal(struct {
		fields
		Shard *int `json:"shard,omitempty"`
	}{fields(f), shard})
}

// discover finds the primitives in the Redis of client, of kind (every
// kind for "") whose key matches pattern (a glob with Redis MATCH
// semantics; every key for ""), reads each one's state, and returns them
// sorted by kind, then key. each bounds each SCAN, and the read of each
// primitive (a few calls); 0 leaves the bound to ctx.
// An unknown kind is a usage error; a failed SCAN fails the whole, while a
// primitive whose state cannot be read is returned with its Error.
func discover(ctx context.Context, client redis.UniversalClient, kind, pattern string, each time.Duration) ([]found, error) {
	fs, err := findPrimitives(ctx, client, kind, pattern, each)
	if err != nil {
		return nil, err
	}
	readAll(ctx, client, fs, each)
	// A candidate that turned out to hold another package's data (or a
	// value of a user's that looks like one) is no primitive.
	fs = slices.DeleteFunc(fs, notPrimitive)
	return fs, ctx.Err()
}

// notPrimitive reports whether f, as describe left it, is no primitive:
// its keys hold another package's data or a value of a user's, or they
// lapsed since the SCAN. ls and the page leave it out.
func notPrimitive(f found) bool { return f.Kind == "" }

// readAll reads the state of each of fs, a few at once.
func readAll(ctx context.Context, client redis.UniversalClient, fs []found, each time.Duration) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(readers, len(fs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				describe(ctx, client, &fs[i], each)
			}
		}()
	}
	for i := range fs {
		next <- i
	}
	close(next)
	wg.Wait()
}

// findPrimitives finds the primitives as discover does, without reading
// their state: State is empty. It SCANs every master of a Cluster, and
// the one server of any other client.
//
// Its round trips grow with the keys it scans, not with the primitives it
// finds: on each master, its SCANs (of about scanCount keys each), then,
// for the Limiters and Counters that SCAN found by their limit record
// alone, one pipelined round trip per classifyBatch of them, with a GET
// and a TYPE for each; the masters at once. So for n of them found on a
// master, it sends that master its SCANs and ⌈n/classifyBatch⌉ pipelines,
// and no other command; it reads nothing else of any primitive.
func findPrimitives(ctx context.Context, client redis.UniversalClient, kind, pattern string, each time.Duration) ([]found, error) {
	kind, err := parseKind(kind)
	if err != nil {
		return nil, err
	}
	if client == nil || ctx == nil {
		return nil, errors.New("discover: no client or no context")
	}
	if pattern == "" {
		pattern = "*"
	}
	var mu sync.Mutex
	byID := make(map[[3]string]*found)
	scan := func(ctx context.Context, node redis.Cmdable, addr string) error {
		var cursor uint64
		for {
			keys, next, err := scanBatch(ctx, node, cursor, matchFor(kind), each)
			if err != nil {
				return err
			}
			mu.Lock()
			for _, key := range keys {
				c, ok := classify(key)
				if !ok || (kind != "" && !c.may(kind)) || !globMatch(pattern, c.key) {
					continue
				}
				c.add(byID, addr)
			}
			mu.Unlock()
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node, node.Options().Addr) })
	} else {
		err = scan(ctx, client, "")
	}
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	fs := make([]found, 0, len(byID))
	for _, f := range byID {
		fs = append(fs, *f)
	}
	// A key's record alone (limit=...) does not say whether a Limiter or
	// a Counter wrote it: the record's fields and the key's type do.
	settleLimits(ctx, client, fs, each)
	fs = slices.DeleteFunc(fs, func(f found) bool { return f.Kind == "" || (kind != "" && f.Kind != kind) })
	sortFound(fs)
	return fs, nil
}

// sortFound sorts fs by kind, then key, then a red packet's prefix.
func sortFound(fs []found) {
	slices.SortFunc(fs, func(a, b found) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Prefix, b.Prefix)
	})
}

// scanBatch runs one SCAN of node from cursor, bounded by each.
func scanBatch(ctx context.Context, node redis.Cmdable, cursor uint64, match string, each time.Duration) ([]string, uint64, error) {
	ctx, cancel := bound(ctx, each)
	defer cancel()
	return node.Scan(ctx, cursor, match, scanCount).Result()
}

// bound returns ctx bounded by each, when each is above 0.
func bound(ctx context.Context, each time.Duration) (context.Context, context.CancelFunc) {
	if each > 0 {
		return context.WithTimeout(ctx, each)
	}
	return context.WithCancel(ctx)
}

// matchFor returns the SCAN MATCH for kind: a glob that every key of the
// kind's matches (more may match; classify decides), or "*".
func matchFor(kind string) string {
	switch kind {
	case kindQueue:
		return "*delayqueue*"
	case kindRecent:
		return "*recent*"
	case kindPacket:
		return "*:redpacket:[ps]:*"
	case kindRate:
		return "*ratelimit*"
	case kindAdaptive:
		return "*adaptive*"
	case kindLock:
		return "*lock:*"
	}
	return "*"
}

// kindLimiterOrCounter is the kind of a key found by its limit record
// alone, until the record says which.
const kindLimiterOrCounter = "limiter or counter"

// A candidate is what one scanned key says: the primitive of kind at key
// (a red packet's at prefix and shard) keeps it.
type candidate struct {
	kind, key, prefix string
	shard             int
	fullLimit         int64 // the limit a full marker names
}

// may reports whether c can be a primitive of kind.
func (c candidate) may(kind string) bool {
	return c.kind == kind || (c.kind == kindLimiterOrCounter && (kind == kindLimiter || kind == kindCounter))
}

// add merges c, found on node, into byID: each primitive once, a
// limiter's full markers' highest limit kept, and a key found both by its
// record and as a limiter a limiter.
func (c candidate) add(byID map[[3]string]*found, node string) {
	kind := c.kind
	if kind == kindLimiter || kind == kindLimiterOrCounter {
		kind = kindLimiter // one entry for both, settled below
	}
	id := [3]string{kind, c.key, c.prefix}
	f, ok := byID[id]
	if !ok {
		f = &found{Kind: c.kind, Key: c.key, Prefix: c.prefix, Shard: c.shard, node: node}
		byID[id] = f
	}
	if c.kind == kindLimiter {
		f.Kind = kindLimiter
	}
	f.fullLimit = max(f.fullLimit, c.fullLimit)
}

// classify returns the primitive that key is one of the keys of, if any:
// a name beside a key ("{k}/w", "{t}:k:lock:q"), by the name's suffix, or
// a red packet's hash or shares.
func classify(key string) (candidate, bool) {
	if c, ok := classifyPacket(key); ok {
		return c, true
	}
	// "{k}/suffix" beside a key k without a hash tag, which holds no '}'.
	if strings.HasPrefix(key, "{") {
		if i := strings.IndexByte(key, '}'); i > 1 && strings.HasPrefix(key[i+1:], "/") {
			if c, ok := classifySide(key[1:i], key[i+2:]); ok {
				return c, true
			}
		}
	}
	// "k:suffix" beside a key k with a hash tag; the suffix may hold ':'.
	for i := strings.IndexByte(key, ':'); i >= 0; {
		if c, ok := classifySide(key[:i], key[i+1:]); ok && hashtag.Has(key[:i]) {
			return c, true
		}
		j := strings.IndexByte(key[i+1:], ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return candidate{}, false
}

// classifySide returns the primitive at key that keeps suffix beside it.
// key must be one that its package takes.
func classifySide(key, suffix string) (candidate, bool) {
	if kernel.KeyFault(key) != "" {
		return candidate{}, false
	}
	if strings.HasSuffix(suffix, ":") {
		return candidate{}, false
	}
	c := candidate{key: key}
	pkg, rest, _ := strings.Cut(suffix, ":")
	switch pkg {
	case "limit":
		c.kind = kindLimiterOrCounter
		return c, rest == "" && suffix == "limit"
	case "w", "q", "qd", "qw", "refused":
		c.kind = kindLimiter
		return c, rest == ""
	case "full":
		n, err := strconv.ParseInt(rest, 10, 64)
		c.kind, c.fullLimit = kindLimiter, n
		return c, err == nil && n > 0
	case "lock":
		c.kind = kindLock
		return c, slices.Contains([]string{"q", "qd", "qw"}, rest) || strings.HasPrefix(rest, "owner")
	case "delayqueue":
		// A Cancel's record of its answer ("delayqueue:cancelled:TOKEN")
		// outlives a queue it left empty by a minute: it holds no message,
		// so it finds no queue.
		c.kind = kindQueue
		return c, !strings.Contains(suffix, ":wake") && !strings.HasPrefix(rest, "cancelled:")
	case "recent":
		c.kind = kindRecent
		return c, rest == "" || rest == "bounds"
	case "ratelimit":
		c.kind = kindRate
		return c, rest == "" || rest == "rate"
	case "adaptive":
		c.kind = kindAdaptive
		return c, slices.Contains([]string{"", "leases", "q", "qd", "qw", "bounds"}, rest)
	}
	return candidate{}, false
}

// classifyPacket returns the red packet whose hash or shares key is,
// "{P:n}:redpacket:p:ID" or "{P:n}:redpacket:s:ID".
func classifyPacket(key string) (candidate, bool) {
	if !strings.HasPrefix(key, "{") {
		return candidate{}, false
	}
	end := strings.IndexByte(key, '}')
	if end < 0 {
		return candidate{}, false
	}
	rest, ok := strings.CutPrefix(key[end+1:], ":redpacket:")
	if !ok || len(rest) < 3 || (rest[:2] != "p:" && rest[:2] != "s:") || rest == rest[:2] {
		return candidate{}, false
	}
	tag := key[1:end]
	colon := strings.LastIndexByte(tag, ':')
	if colon < 1 {
		return candidate{}, false
	}
	n, err := strconv.Atoi(tag[colon+1:])
	if err != nil || n < 0 || n >= 1024 || strconv.Itoa(n) != tag[colon+1:] {
		return candidate{}, false
	}
	return candidate{kind: kindPacket, key: rest[2:], prefix: tag[:colon], shard: n}, true
}

// sideName returns the name beside key that ends in suffix.
func sideName(key, suffix string) string {
	prefix, _ := hashtag.SidePrefix(key)
	return prefix + suffix
}

// sideRecord reads the settings record beside key ending in suffix; nil
// when there is none, or when key has no names beside it. A record that
// cannot be read is an error, as a page's detail shows it.
func sideRecord(ctx context.Context, client redis.UniversalClient, key, suffix string) (url.Values, error) {
	if _, ok := hashtag.SidePrefix(key); !ok {
		return nil, nil
	}
	return record.Read(ctx, client, sideName(key, suffix))
}

// recordedLimit returns the limit in the record that a Limiter or a
// Counter keeps beside key; 0 when none is recorded.
func recordedLimit(ctx context.Context, client redis.UniversalClient, key string) (int64, error) {
	rec, err := sideRecord(ctx, client, key, "limit")
	if err != nil {
		return 0, err
	}
	if n, ok := recordInt(rec, "limit"); ok && n > 0 {
		return n, nil
	}
	return 0, nil
}

// recordInt returns field of rec as an integer, and whether it is one.
func recordInt(rec url.Values, field string) (int64, bool) {
	n, err := strconv.ParseInt(rec.Get(field), 10, 64)
	return n, err == nil
}

// classifyBatch is how many primitives found by their limit record alone
// one pipeline classifies: each of them was found by a key of its own, so
// a master gets no more such pipelines than SCANs of scanCount keys.
const classifyBatch = scanCount

// settleLimits tells, for each of fs whose Kind is kindLimiterOrCounter,
// which wrote its limit record, as limitKind does; it sets Kind to ""
// when neither is there any more, or when they cannot be read. It reads
// those that each master's SCAN found classifyBatch at a time, in one
// pipeline each bounded by each, the masters at once.
func settleLimits(ctx context.Context, client redis.UniversalClient, fs []found, each time.Duration) {
	byNode := make(map[string][]int)
	for i := range fs {
		if fs[i].Kind == kindLimiterOrCounter {
			byNode[fs[i].node] = append(byNode[fs[i].node], i)
		}
	}
	var wg sync.WaitGroup
	for _, todo := range byNode {
		wg.Go(func() {
			for batch := range slices.Chunk(todo, classifyBatch) {
				settleBatch(ctx, client, fs, batch, each)
			}
		})
	}
	wg.Wait()
}

// settleBatch settles fs[i] for each i of batch, in one pipeline.
func settleBatch(ctx context.Context, client redis.UniversalClient, fs []found, batch []int, each time.Duration) {
	ctx, cancel := bound(ctx, each)
	defer cancel()
	recs := make([]*redis.StringCmd, len(batch))
	types := make([]*redis.StatusCmd, len(batch))
	// Each command's own error is read below: a primitive whose reads
	// failed is left out, as one whose keys are gone, and the others stand.
	_, _ = client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for j, i := range batch {
			recs[j] = p.Get(ctx, sideName(fs[i].Key, "limit"))
			types[j] = p.Type(ctx, fs[i].Key)
		}
		return nil
	})
	for j, i := range batch {
		fs[i].Kind = limitKind(parseRecord(recs[j]), types[j].Val())
	}
}

// parseRecord returns the settings record that a GET of its key read, as
// record.Read does; nil when there is none or it cannot be read.
func parseRecord(get *redis.StringCmd) url.Values {
	s, err := get.Result()
	if err != nil {
		return nil
	}
	v, err := url.ParseQuery(s)
	if err != nil {
		return nil
	}
	return v
}

// limitKind tells which wrote the limit record rec (nil for none) beside
// a key of type typ ("" when not known): a Limiter's has a lease; else
// the type of the key says (a Limiter's lease set, a Counter's integer).
// It returns "" when neither is there any more.
func limitKind(rec url.Values, typ string) string {
	switch {
	case rec.Has("lease"), typ == "zset":
		return kindLimiter
	case typ == "string", rec != nil:
		return kindCounter
	}
	return ""
}

// describe reads f's state through its package's own calls, and sets its
// State and Figures, or its Error. A primitive found by a key that holds
// another type than its package keeps there (a value of a user's whose
// name looks like one of the package's) is left with an empty Kind: it is
// none.
func describe(ctx context.Context, client redis.UniversalClient, f *found, each time.Duration) {
	ctx, cancel := bound(ctx, each)
	defer cancel()
	f.Figures = make(map[string]int64)
	var err error
	switch f.Kind {
	case kindLimiter:
		err = describeLimiter(ctx, client, f)
	case kindCounter:
		err = describeCounter(ctx, client, f)
	case kindLock:
		err = describeLock(ctx, client, f)
	case kindQueue:
		err = describeQueue(ctx, client, f)
	case kindRecent:
		err = describeRecent(ctx, client, f)
	case kindPacket:
		err = describePacket(ctx, client, f)
	case kindRate:
		err = describeRate(ctx, client, f)
	case kindAdaptive:
		err = describeAdaptive(ctx, client, f)
	default:
		err = fmt.Errorf("unknown kind %q", f.Kind)
	}
	switch {
	case err == nil:
		f.Error = ""
	case strings.Contains(err.Error(), "WRONGTYPE"):
		f.Kind, f.State = "", ""
	default:
		f.Error = err.Error()
		f.State = "unreadable: " + err.Error()
	}
	if len(f.Figures) == 0 {
		f.Figures = nil
	}
}

func describeLimiter(ctx context.Context, client redis.UniversalClient, f *found) error {
	// The record's limit, else that of the full marker found, else the
	// waiters'. A record that cannot be read is taken as none.
	v, err := readLimiter(ctx, client, f.Key, 0, func(ctx context.Context, _ slotlimit.Snapshot) (limitInfo, error) {
		li := limitInfo{limit: f.fullLimit}
		if n, _ := recordedLimit(ctx, client, f.Key); n > 0 {
			li.limit = n
		}
		return li, nil
	})
	if err != nil {
		return err
	}
	snap := v.snap
	f.Figures["in_use"] = snap.InUse
	f.Figures["holders"] = int64(len(snap.Holders))
	f.Figures["waiting"] = int64(len(snap.Queue))
	if v.li.limit > 0 {
		f.Figures["limit"] = v.li.limit
	}
	f.State = ofLimit(snap.InUse, v.li.limit) + fmt.Sprintf(", %d waiting", len(snap.Queue))
	return nil
}

func describeCounter(ctx context.Context, client redis.UniversalClient, f *found) error {
	c, err := slotlimit.NewCounter(client, slotlimit.Config{Key: f.Key, Limit: slotlimit.MaxLimit})
	if err != nil {
		return err
	}
	n, err := c.Count(ctx)
	if err != nil {
		return err
	}
	f.Figures["in_use"] = n
	// A record that cannot be read is taken as none.
	if limit, _ := recordedLimit(ctx, client, f.Key); limit > 0 {
		f.Figures["limit"] = limit
	}
	f.State = ofLimit(n, f.Figures["limit"])
	return nil
}

func describeLock(ctx context.Context, client redis.UniversalClient, f *found) error {
	_, info, err := readLock(ctx, client, f.Key)
	if err != nil {
		return err
	}
	f.Figures["waiting"] = info.Waiters
	if !info.Held() {
		f.Figures["held"] = 0
		f.State = "free"
	} else {
		f.Figures["held"] = 1
		f.Figures["ttl_ms"] = max(info.TTL.Milliseconds(), -1)
		f.State = "held"
		if info.Owner != "" {
			f.State += " by " + ownerText(info.Owner)
		}
		if info.TTL < 0 {
			f.State += ", no expiry"
		} else {
			f.State += ", " + left(info.TTL) + " left"
		}
	}
	if info.Waiters > 0 {
		f.State += fmt.Sprintf(", %d waiting", info.Waiters)
	}
	return nil
}

// ownerText returns a lock owner's description as a line shows it: in
// words, spaces and all, and quoted when it holds what a terminal should
// not print.
func ownerText(owner string) string {
	if strings.IndexFunc(owner, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(owner)
	}
	return owner
}

func describeQueue(ctx context.Context, client redis.UniversalClient, f *found) error {
	q, err := newQueue(client, f.Key)
	if err != nil {
		return err
	}
	st, err := readQueueStats(ctx, q)
	if err != nil {
		return err
	}
	f.Figures["ready"], f.Figures["delayed"], f.Figures["inflight"], f.Figures["dead"] = st.Ready, st.Delayed, st.InFlight, st.Dead
	f.State = fmt.Sprintf("%d ready, %d delayed, %d in flight, %d dead", st.Ready, st.Delayed, st.InFlight, st.Dead)
	return nil
}

func describeRecent(ctx context.Context, client redis.UniversalClient, f *found) error {
	// Every item counts, whatever its age; a bounds record that cannot be
	// read is taken as none.
	v, err := readRecent(ctx, client, f.Key, recentRead{maxAgeSet: true, anyRecord: true})
	if err != nil {
		return err
	}
	f.Figures["items"] = v.total
	f.State = plural(int(v.total), "item")
	var bounds []string
	if v.known {
		f.Figures["max"] = v.bounds.Max
		bounds = append(bounds, fmt.Sprintf("max %d", v.bounds.Max))
		if age := v.bounds.MaxAge; age > 0 {
			f.Figures["max_age_ms"] = age.Milliseconds()
			bounds = append(bounds, "max age "+age.String())
		}
	}
	if len(bounds) > 0 {
		f.State += " (" + strings.Join(bounds, ", ") + ")"
	}
	return nil
}

func describePacket(ctx context.Context, client redis.UniversalClient, f *found) error {
	snap, err := readPacket(ctx, client, f.Prefix, packetShards(f.Key, f.Shard), f.Key)
	if errors.Is(err, redpacket.ErrNotFound) {
		f.Kind = "" // its keys lapsed since the SCAN
		return nil
	}
	if err != nil {
		return err
	}
	f.Figures["shares_left"], f.Figures["shares"] = int64(snap.SharesLeft), int64(snap.Packet.Count)
	f.Figures["amount_left"], f.Figures["amount"] = snap.AmountLeft, snap.Packet.Total
	f.Figures["claims"] = int64(len(snap.Claims))
	f.State = fmt.Sprintf("%d of %d shares left", snap.SharesLeft, snap.Packet.Count)
	if !snap.ExpiredAt.IsZero() {
		f.State += ", expired"
	}
	if f.Prefix != redpacket.DefaultPrefix {
		f.State += fmt.Sprintf(" (prefix %s)", display(f.Prefix))
	}
	return nil
}

// packetShards returns a Config.Shards under which packet id lives in
// shard n, as a Store with the Shards that wrote it does: a packet's shard
// is the CRC-32 of its ID modulo Shards (redpacket.Config.Shards), and the
// Store's own Shards is one such count.
func packetShards(id string, n int) int {
	for shards := n + 1; shards <= 1024; shards++ {
		if shardOf(id, shards) == n {
			return shards
		}
	}
	return 1
}

// shardOf returns the shard of packet id under a Config.Shards of shards.
func shardOf(id string, shards int) int {
	return int(crc32.ChecksumIEEE([]byte(id)) % uint32(shards))
}

// describeRate reads a rate limit with rateState, which writes nothing,
// so that a read-only user reads it and a look leaves the key as it was.
func describeRate(ctx context.Context, client redis.UniversalClient, f *found) error {
	res, ok, err := rateState(ctx, client, f.Key)
	if err != nil {
		return err
	}
	if !ok {
		// Found by its data alone: a GCRA key, whose record lapsed.
		f.State = "gcra, rate unknown (not recorded)"
		return nil
	}
	limit := res.Limit
	f.Figures["remaining"], f.Figures["reset_after_ms"] = res.Remaining, res.ResetAfter.Milliseconds()
	f.Figures["rate"], f.Figures["period_ms"] = limit.Rate, limit.Period.Milliseconds()
	// burst is the most events allowed at once: a FixedWindow's Rate.
	f.Figures["burst"] = max(limit.Burst, limit.Rate)
	f.State = fmt.Sprintf("%s %s, %d allowed now", limit.Algorithm, perPeriod(limit), res.Remaining)
	return nil
}

// rateState reads key's allowance under the limit recorded beside it,
// with ratelimit's Limiter.Limit and Limiter.Inspect, which write
// nothing; false when no limit is recorded. Its Limit is the recorded one.
func rateState(ctx context.Context, client redis.UniversalClient, key string) (ratelimit.Result, bool, error) {
	limit, err := recordedRate(ctx, client, key)
	if err != nil || limit == (ratelimit.Limit{}) {
		return ratelimit.Result{}, false, err
	}
	res, err := inspectRate(ctx, client, key, limit)
	if err != nil {
		return ratelimit.Result{}, false, err
	}
	return res, true, nil
}

// perPeriod formats a limit's rate, "10/s", "100/1m0s", with its burst
// when it has one of its own.
func perPeriod(l ratelimit.Limit) string {
	s := fmt.Sprintf("%d/%v", l.Rate, l.Period)
	if l.Period == time.Second {
		s = fmt.Sprintf("%d/s", l.Rate)
	}
	if l.Algorithm == ratelimit.GCRA && l.Burst > 0 && l.Burst != l.Rate {
		s += fmt.Sprintf(" burst %d", l.Burst)
	}
	return s
}

func describeAdaptive(ctx context.Context, client redis.UniversalClient, f *found) error {
	// The limit as stored, beside the bounds recorded; a bounds record
	// that cannot be read is taken as none.
	v, err := readAdaptive(ctx, client, f.Key, adaptiveRead{anyRecord: true})
	if err != nil {
		return err
	}
	info := v.info
	f.Figures["in_use"], f.Figures["waiting"] = info.InUse, info.Waiters
	bounds := ""
	if v.recorded {
		f.Figures["min"], f.Figures["max"] = v.min, v.max
		bounds = fmt.Sprintf(" (%d..%d)", v.min, v.max)
	}
	if info.Stored {
		f.Figures["limit"] = info.Limit
		f.State = fmt.Sprintf("limit %d%s, %d in flight", info.Limit, bounds, info.InUse)
	} else {
		f.State = fmt.Sprintf("no limit stored%s, %d in flight", bounds, info.InUse)
	}
	if info.Waiters > 0 {
		f.State += fmt.Sprintf(", %d waiting", info.Waiters)
	}
	return nil
}

// globMatch reports whether str matches pattern as Redis MATCH and KEYS
// match it: '*' any run of bytes, '?' any one byte, [abc], [^abc] and
// [a-z] a byte of a set, and '\\' quoting the next byte. On a mismatch
// it goes back only to the last '*', so that its time grows with
// len(pattern)×len(str), whatever the pattern.
func globMatch(pattern, str string) bool {
	pi, si := 0, 0
	star, starSi := -1, 0 // where the pattern goes on after the last '*', and where str did then
	for {
		if pi < len(pattern) && pattern[pi] == '*' {
			pi++
			star, starSi = pi, si
			continue
		}
		if si == len(str) {
			return pi == len(pattern)
		}
		if n, ok := matchOne(pattern[pi:], str[si]); ok {
			pi, si = pi+n, si+1
			continue
		}
		if star < 0 {
			return false
		}
		// Let the last '*' take one more byte, and go on after it.
		starSi++
		pi, si = star, starSi
	}
}

// matchOne matches c against the element that p begins with (not '*'),
// and returns whether it matched and the element's length.
func matchOne(p string, c byte) (int, bool) {
	if len(p) == 0 {
		return 0, false
	}
	switch p[0] {
	case '?':
		return 1, true
	case '[':
		ok, rest := matchClass(p[1:], c)
		return len(p) - len(rest), ok
	case '\\':
		if len(p) >= 2 {
			return 2, p[1] == c
		}
	}
	return 1, p[0] == c
}

// matchClass matches c against the class that p begins with, after its
// '[', as Redis does (an unclosed class runs to the pattern's end), and
// returns whether it matched and the pattern after the class.
func matchClass(p string, c byte) (bool, string) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	match := false
	for len(p) > 0 && p[0] != ']' {
		switch {
		case p[0] == '\\' && len(p) >= 2:
			p = p[1:]
			if p[0] == c {
				match = true
			}
			p = p[1:]
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				match = true
			}
			p = p[3:]
		default:
			if p[0] == c {
				match = true
			}
			p = p[1:]
		}
	}
	if len(p) > 0 { // the ']'
		p = p[1:]
	}
	return match != not, p
}
