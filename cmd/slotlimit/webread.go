package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/hashtag"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/redpacket"
)

// What the page shows of each kind of primitive: the figures and plots
// of the state that describe (discover.go) samples once a second, and the
// detail of a primitive's own page, read when it asks, through the
// library's own calls. Each kind is read and written through the
// functions its commands use (readLimiter and releaseHolder in
// limiter.go, readLock and breakLock in lock.go, readQueueStats,
// requeueDead, dropDead and cancelQueued in queue.go, recordedRate and
// resetRate in rate.go, readRecent in recent.go, readAdaptive in
// adaptive.go, readPacket in packet.go), so the page and the commands
// agree; and it answers in their words (noneWords and cli.typeWords in
// answers.go, lockFree in lock.go).

// A plotSpec is one plot of a kind: a title, and the figures it draws
// (found.Figures' names).
type plotSpec struct {
	Title  string   `json:"title"`
	Series []string `json:"series"`
}

// A kindSpec is what the page knows of a kind: the figures it shows, by
// name (found.Figures') with their labels, its plots, and how to read its
// detail.
type kindSpec struct {
	Name    string      `json:"name"`
	Figures [][2]string `json:"figures"` // name, label
	Plots   []plotSpec  `json:"plots"`
	detail  func(r *webReader, ctx context.Context, it found) (detail, error)
}

// webKinds is every kind, in the order the page lists them.
var webKinds = []kindSpec{
	{Name: kindLimiter, Figures: [][2]string{{"in_use", "in use"}, {"limit", "limit"}, {"holders", "holders"}, {"waiting", "waiting"}},
		Plots:  []plotSpec{{"units in use against the limit", []string{"in_use", "limit"}}},
		detail: (*webReader).detailLimiter},
	{Name: kindCounter, Figures: [][2]string{{"in_use", "in use"}, {"limit", "limit"}},
		Plots:  []plotSpec{{"units in use against the limit", []string{"in_use", "limit"}}},
		detail: (*webReader).detailCounter},
	{Name: kindAdaptive, Figures: [][2]string{{"limit", "limit"}, {"in_use", "in flight"}, {"waiting", "waiting"}, {"min", "min"}, {"max", "max"}},
		Plots:  []plotSpec{{"the limit against the calls in flight", []string{"limit", "in_use"}}},
		detail: (*webReader).detailAdaptive},
	{Name: kindQueue, Figures: [][2]string{{"ready", "ready"}, {"delayed", "delayed"}, {"inflight", "in flight"}, {"dead", "dead"}, {lateFigure, "lateness (ms)"}},
		Plots: []plotSpec{{"depths", []string{"ready", "delayed", "inflight", "dead"}},
			{"lateness: age of the oldest due message (ms)", []string{lateFigure}}},
		detail: (*webReader).detailQueue},
	{Name: kindRate, Figures: [][2]string{{"remaining", "allowed now"}, {"burst", "burst"}, {"rate", "rate"}},
		Plots:  []plotSpec{{"events allowed now", []string{"remaining", "burst"}}},
		detail: (*webReader).detailRate},
	{Name: kindLock, Figures: [][2]string{{"held", "held"}, {"ttl_ms", "time left (ms)"}, {"waiting", "waiting"}},
		detail: (*webReader).detailLock},
	{Name: kindRecent, Figures: [][2]string{{"items", "items"}, {"max", "max"}},
		Plots:  []plotSpec{{"items", []string{"items"}}},
		detail: (*webReader).detailRecent},
	{Name: kindPacket, Figures: [][2]string{{"shares_left", "shares left"}, {"shares", "shares"}, {"amount_left", "amount left"}},
		Plots:  []plotSpec{{"shares left", []string{"shares_left"}}},
		detail: (*webReader).detailPacket},
}

// lateFigure is the figure the sampler adds to a delay queue's: the age
// of its oldest due message, in milliseconds.
const lateFigure = "late_ms"

// kindOf returns the spec of the kind named name.
func kindOf(name string) (*kindSpec, bool) {
	for i := range webKinds {
		if webKinds[i].Name == name {
			return &webKinds[i], true
		}
	}
	return nil, false
}

// A detail is what a primitive's own page shows: lines of label and
// value, tables, and the writes it offers.
type detail struct {
	Kind    string        `json:"kind"`
	Key     string        `json:"key"`
	Summary [][2]string   `json:"summary"`
	Tables  []detailTable `json:"tables"`
	Actions []webAction   `json:"actions,omitempty"` // on the primitive as a whole
	Note    string        `json:"note,omitempty"`
}

// A detailTable is a table of a detail. Its Actions are offered on each
// row, with the row's cell ArgCol as their argument.
type detailTable struct {
	Title   string      `json:"title"`
	Columns []string    `json:"columns"`
	Rows    [][]string  `json:"rows"`
	Actions []webAction `json:"actions,omitempty"`
}

// A webAction is a write the page offers: POST /api/write with kind,
// key, action and arg. Label is the button's text, and Confirm the
// question asked first.
type webAction struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	Arg     string `json:"arg,omitempty"`
	ArgCol  int    `json:"arg_col,omitempty"`
	Confirm string `json:"confirm"`
}

// A webReader reads the details of primitives, and writes, for the page.
type webReader struct {
	client redis.UniversalClient
	// typeWords explains an error of Redis's for a key that holds a
	// value of another type than kind keeps there, as the commands do
	// (cli.typeWords); false for any other error.
	typeWords func(ctx context.Context, err error, kind, key string) (string, bool)
}

// An answer is a detail's or a write's answer no, in the commands' words:
// the key holds no primitive of the kind asked, "no KIND at KEY" (HTTP
// 404), or a value of another type than the kind keeps there (409). It
// is no failure of Redis's, which is 502.
type answer struct {
	status int
	words  string
}

func (a answer) Error() string { return a.words }

// noneAnswer is the answer of a key that holds no primitive of kind.
func noneAnswer(kind, key string) answer {
	return answer{status: http.StatusNotFound, words: noneWords(kind, key)}
}

// explain returns err, a read's or a write's of the primitive of kind at
// key, or, when Redis refused it because the key holds a value of
// another type, that answer in the commands' words.
func (r *webReader) explain(ctx context.Context, err error, kind, key string) error {
	if words, ok := r.typeWords(ctx, err, kind, key); ok {
		return answer{status: http.StatusConflict, words: words}
	}
	return err
}

// refuseClaimed is the page's cli.refuseClaimed: a write of kind on a
// key that the records beside it give to a primitive of another kind is
// refused (409) in the commands' words, before anything is written.
func (r *webReader) refuseClaimed(ctx context.Context, kind, key string) error {
	words, err := claimedWords(ctx, r.client, kind, key)
	if err != nil || words == "" {
		return err
	}
	return answer{status: http.StatusConflict, words: words}
}

// readLimiter reads the limiter at key with readLimiter, its limit from
// the record beside it (recordedLimit).
func (r *webReader) readLimiter(ctx context.Context, key string) (limiterView, error) {
	return readLimiter(ctx, r.client, key, 0, func(ctx context.Context, _ slotlimit.Snapshot) (limitInfo, error) {
		n, err := recordedLimit(ctx, r.client, key)
		return limitInfo{limit: n}, err
	})
}

func (r *webReader) detailLimiter(ctx context.Context, it found) (detail, error) {
	v, err := r.readLimiter(ctx, it.Key)
	if err != nil {
		return detail{}, err
	}
	snap := v.snap
	// As count says: a key with no live lease, no queue and no record
	// holds no limiter.
	if len(snap.Holders) == 0 && len(snap.Queue) == 0 {
		if ok, err := hasRecord(ctx, r.client, it.Key); err != nil {
			return detail{}, err
		} else if !ok {
			return detail{}, noneAnswer(kindLimiter, it.Key)
		}
	}
	d := detail{Summary: [][2]string{
		{"in use", ofLimit(snap.InUse, v.li.limit)},
		{"holders", strconv.Itoa(len(snap.Holders))},
		{"waiting", strconv.Itoa(len(snap.Queue))},
		{"server clock", snap.ServerTime.UTC().Format(clockFormat)},
	}}
	holders := detailTable{Title: "holders", Columns: []string{"holder", "units", "time left", "expires at (server clock)"}, Rows: [][]string{},
		Actions: []webAction{{Name: "release", Label: "force-release",
			Confirm: "Force-release this holder? Its units go to the first waiters that fit, as a release's do."}}}
	for _, h := range snap.Holders {
		holders.Rows = append(holders.Rows, []string{h.ID, strconv.FormatInt(h.Weight, 10), left(h.ExpiresAt.Sub(snap.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat)})
	}
	queue := detailTable{Title: "waiters, in arrival order", Columns: []string{"waiter", "units", "limit", "lease", "entry lapses in"}, Rows: [][]string{}}
	for _, q := range snap.Queue {
		queue.Rows = append(queue.Rows, []string{q.ID, strconv.FormatInt(q.Units, 10), orDash(q.Limit), q.TTL.String(), left(q.EntryExpiresAt.Sub(snap.ServerTime))})
	}
	d.Tables = []detailTable{holders, queue}
	return d, nil
}

// release force-releases holder, as slotlimit release does: its units go
// to the first waiters that fit.
func (r *webReader) release(ctx context.Context, key, holder string) (string, error) {
	v, err := r.readLimiter(ctx, key)
	if err != nil {
		return "", err
	}
	// The limit names the full marker the release ends; unknown, the
	// key is not full.
	l, err := newLimiter(r.client, key, v.li.limit)
	if err != nil {
		return "", err
	}
	released, err := releaseHolder(ctx, l, holder, v.snap)
	if err != nil {
		return "", err
	}
	if !released {
		return heldNothing(key, holder), errNo
	}
	return fmt.Sprintf("released %s on %s", display(holder), key), nil
}

func (r *webReader) detailCounter(ctx context.Context, it found) (detail, error) {
	c, err := slotlimit.NewCounter(r.client, slotlimit.Config{Key: it.Key, Limit: slotlimit.MaxLimit})
	if err != nil {
		return detail{}, err
	}
	n, err := c.Count(ctx)
	if err != nil {
		return detail{}, err
	}
	limit, err := recordedLimit(ctx, r.client, it.Key)
	if err != nil {
		return detail{}, err
	}
	return detail{Summary: [][2]string{{"in use", ofLimit(n, limit)}}, Note: "A counter keeps a count, not holders."}, nil
}

func (r *webReader) detailAdaptive(ctx context.Context, it found) (detail, error) {
	// The limit as stored, beside the bounds recorded.
	v, err := readAdaptive(ctx, r.client, it.Key, adaptiveRead{})
	if err != nil {
		return detail{}, err
	}
	info := v.info
	limit := strconv.FormatInt(info.Limit, 10)
	if !info.Stored {
		limit = "none stored"
	}
	bounds := "unknown (not recorded)"
	if v.recorded {
		bounds = fmt.Sprintf("%d..%d", v.min, v.max)
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format(clockFormat)
	}
	d := detail{Summary: [][2]string{
		{"limit", limit}, {"bounds", bounds}, {"in flight", strconv.FormatInt(info.InUse, 10)},
		{"waiting", strconv.FormatInt(info.Waiters, 10)}, {"last went down", when(info.LastDecrease)},
		{"last went up", when(info.LastIncrease)}, {"server clock", info.ServerTime.UTC().Format(clockFormat)},
	}}
	holders := detailTable{Title: "holders", Columns: []string{"holder", "time left", "expires at (server clock)"}, Rows: [][]string{}}
	for _, h := range info.Holders {
		holders.Rows = append(holders.Rows, []string{h.ID, left(h.ExpiresAt.Sub(info.ServerTime)), h.ExpiresAt.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{holders}
	return d, nil
}

// detailRows bounds the rows a detail lists of one table.
const detailRows = 100

func (r *webReader) detailQueue(ctx context.Context, it found) (detail, error) {
	q, err := newQueue(r.client, it.Key)
	if err != nil {
		return detail{}, err
	}
	st, err := readQueueStats(ctx, q)
	if err != nil {
		return detail{}, err
	}
	d := detail{Summary: [][2]string{
		{"ready", strconv.FormatInt(st.Ready, 10)}, {"delayed", strconv.FormatInt(st.Delayed, 10)},
		{"in flight", strconv.FormatInt(st.InFlight, 10)}, {"dead", strconv.FormatInt(st.Dead, 10)},
	}, Note: fmt.Sprintf("The first %d messages of each state, in the order the queue serves them. "+
		"A message in flight is its consumer's until it acks, gives it back or its lease lapses.", detailRows)}
	cancel := webAction{Name: "cancel", Label: "cancel", Confirm: "Delete this message for good, before it is delivered?"}
	for _, st := range []struct {
		state   delayqueue.State
		title   string
		when    string
		actions []webAction
	}{
		{delayqueue.Ready, "ready", "due since (server clock)", []webAction{cancel}},
		{delayqueue.Delayed, "delayed", "due at (server clock)", []webAction{cancel}},
		{delayqueue.InFlight, "in flight", "lease lapses at (server clock)", nil},
		{delayqueue.Dead, "dead letters", "dead since (server clock)", []webAction{
			{Name: "requeue", Label: "requeue", Confirm: "Move this dead letter back to the queue, due now?"},
			{Name: "drop", Label: "drop", Confirm: "Delete this dead letter for good?"},
		}},
	} {
		msgs, err := q.Messages(ctx, st.state, 0, detailRows)
		if err != nil {
			return detail{}, err
		}
		t := detailTable{Title: st.title, Columns: []string{"id", "attempts", st.when, "bytes", "payload"}, Rows: [][]string{}, Actions: st.actions}
		for _, m := range msgs {
			at := m.DueAt
			if st.state == delayqueue.InFlight {
				at = m.Deadline
			}
			t.Rows = append(t.Rows, []string{m.ID, strconv.Itoa(m.Attempt), at.UTC().Format(clockFormat), strconv.Itoa(len(m.Payload)), clip(text(m.Payload), 200)})
		}
		d.Tables = append(d.Tables, t)
	}
	return d, nil
}

func (r *webReader) detailRate(ctx context.Context, it found) (detail, error) {
	res, ok, err := rateState(ctx, r.client, it.Key)
	if err != nil {
		return detail{}, err
	}
	if !ok {
		return detail{Summary: [][2]string{{"limit", "limit unknown"}},
			Note: "The limit is read from the record beside the key, which the Limiters write while they are used."}, nil
	}
	full := "now"
	if res.ResetAfter > 0 {
		full = "in " + left(res.ResetAfter)
	}
	return detail{Summary: [][2]string{{"limit", res.Limit.String()}, {"allowed now", plural(int(res.Remaining), "event")}, {"full again", full}},
		Actions: []webAction{{Name: "reset", Label: "reset", Confirm: "Give this key its full allowance again?"}}}, nil
}

// resetRate gives key its full allowance again, under its recorded limit.
func (r *webReader) resetRate(ctx context.Context, key string) (string, error) {
	if err := r.refuseClaimed(ctx, kindRate, key); err != nil {
		return "", err
	}
	limit, err := recordedRate(ctx, r.client, key)
	if err != nil {
		return "", err
	}
	if limit == (ratelimit.Limit{}) {
		// As rate reset says, which the page gives no -rate: a key with
		// neither a record nor data holds no rate limit.
		names, ok := hashtag.Names(key, "ratelimit")
		if !ok {
			names = []string{key}
		}
		n, err := r.client.Exists(ctx, names...).Result()
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", noneAnswer(kindRate, key)
		}
		return fmt.Sprintf("%s holds data but no rate record (a Limiter writes one on its first call, and every minute while used): nothing reset", display(key)), errNo
	}
	if err := resetRate(ctx, r.client, key, limit); err != nil {
		return "", err
	}
	return fmt.Sprintf("reset %s, %v", display(key), limit), nil
}

func (r *webReader) detailLock(ctx context.Context, it found) (detail, error) {
	_, info, err := readLock(ctx, r.client, it.Key)
	if err != nil {
		return detail{}, err
	}
	d := detail{}
	if !info.Held() {
		d.Summary = append(d.Summary, [2]string{"state", "free"})
	} else {
		// "" when its owner's client writes no description.
		owner := info.Owner
		if owner == "" {
			owner = "unknown"
		}
		d.Summary = append(d.Summary, [2]string{"state", "held"}, [2]string{"owner", owner},
			[2]string{"owner token", info.Token}, [2]string{"time left", ttl(info.TTL)})
		d.Actions = []webAction{{Name: "break", Label: "break the lock", Arg: info.Token,
			Confirm: "Break this lock, as its owner's unlock would? The first waiter is handed it."}}
	}
	d.Summary = append(d.Summary, [2]string{"waiting", strconv.FormatInt(info.Waiters, 10)},
		[2]string{"fence floor", fmt.Sprintf("%d µs: the owner's fence is at most this, every later owner's higher", info.FenceFloor)})
	return d, nil
}

// breakLock breaks the lock if it is still held under token. A lock
// that is not is left alone, and the answer is lock break's: that it is
// free, or that it changed hands or lapsed.
func (r *webReader) breakLock(ctx context.Context, key, token string) (string, error) {
	if err := r.refuseClaimed(ctx, kindLock, key); err != nil {
		return "", err
	}
	m, err := mutex(r.client, key)
	if err != nil {
		return "", err
	}
	broken, msg, err := breakLock(ctx, m, token)
	switch {
	case err != nil:
		return "", err
	case broken:
		return fmt.Sprintf("broke lock %s", key), nil
	}
	if info, err := m.Inspect(ctx); err == nil && !info.Held() {
		msg = lockFree(key)
	}
	return msg, errNo
}

func (r *webReader) detailRecent(ctx context.Context, it found) (detail, error) {
	// The recorded MaxAge leaves out what the list's own handles no
	// longer show.
	v, err := readRecent(ctx, r.client, it.Key, recentRead{count: detailRows})
	if err != nil {
		return detail{}, err
	}
	b := "unknown (not recorded)"
	if v.known {
		b = fmt.Sprintf("at most %d items", v.bounds.Max)
		if v.bounds.MaxAge > 0 {
			b += fmt.Sprintf(", each for at most %v", v.bounds.MaxAge)
		}
	}
	d := detail{Summary: [][2]string{{"items", strconv.FormatInt(v.total, 10)}, {"bounds", b}}}
	t := detailTable{Title: fmt.Sprintf("items, newest first (at most %d)", detailRows), Columns: []string{"value", "last added (server clock)"}, Rows: [][]string{}}
	for _, it := range v.items {
		t.Rows = append(t.Rows, []string{it.Value, it.At.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{t}
	return d, nil
}

func (r *webReader) detailPacket(ctx context.Context, it found) (detail, error) {
	snap, err := readPacket(ctx, r.client, it.Prefix, packetShards(it.Key, it.Shard), it.Key)
	if errors.Is(err, redpacket.ErrNotFound) {
		return detail{}, noneAnswer(kindPacket, it.Key)
	}
	if err != nil {
		return detail{}, err
	}
	d := detail{Summary: [][2]string{
		{"packet", it.Key}, {"prefix", it.Prefix}, {"split", snap.Packet.Split.String()},
		{"shares left", fmt.Sprintf("%d of %d", snap.SharesLeft, snap.Packet.Count)},
		{"amount left", fmt.Sprintf("%d of %d", snap.AmountLeft, snap.Packet.Total)},
		{"created", snap.CreatedAt.UTC().Format(clockFormat)},
		{"expires", snap.ExpiresAt.UTC().Format(clockFormat)},
		{"persister", r.persisterLag(ctx, fmt.Sprintf("{%s:%d}:redpacket:log", it.Prefix, it.Shard))},
	}}
	t := detailTable{Title: "claims, in the order taken", Columns: []string{"seq", "user", "amount", "at (server clock)"}, Rows: [][]string{}}
	for _, cl := range snap.Claims {
		t.Rows = append(t.Rows, []string{strconv.Itoa(cl.Seq), cl.User, strconv.FormatInt(cl.Amount, 10), cl.At.UTC().Format(clockFormat)})
	}
	d.Tables = []detailTable{t}
	return d, nil
}

// persisterLag describes how far the persisters of a shard are behind its
// claim log, the stream at log: of each consumer group on it, the entries
// not yet read (lag) and those read and not yet written (pending).
func (r *webReader) persisterLag(ctx context.Context, log string) string {
	groups, err := r.client.XInfoGroups(ctx, log).Result()
	switch {
	case err != nil && strings.Contains(err.Error(), "no such key"):
		return "no claim log"
	case err != nil:
		return "unknown: " + err.Error()
	case len(groups) == 0:
		return "no persister has read the claim log"
	}
	var parts []string
	for _, g := range groups {
		lag := "lag unknown"
		if g.Lag >= 0 {
			lag = plural(int(g.Lag), "entry") + " behind"
			lag = strings.Replace(lag, "entrys", "entries", 1)
		}
		parts = append(parts, fmt.Sprintf("group %s: %s, %d pending", display(g.Name), lag, g.Pending))
	}
	return strings.Join(parts, "; ")
}

// lateness returns the age of the oldest due message of the delay queue
// f, on the server's clock: 0 when none is due. It reports false when it
// cannot be read.
func (r *webReader) lateness(ctx context.Context, f found) (time.Duration, bool) {
	q, err := newQueue(r.client, f.Key)
	if err != nil {
		return 0, false
	}
	oldest, err := q.Messages(ctx, delayqueue.Ready, 0, 1)
	if err != nil {
		return 0, false
	}
	if len(oldest) == 0 {
		return 0, true
	}
	now, err := r.client.Time(ctx).Result()
	if err != nil {
		return 0, false
	}
	return max(now.Sub(oldest[0].DueAt), 0), true
}
