package redpacket

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults for a PersisterConfig that leaves a field zero.
const (
	DefaultGroup     = "redpacket-persister"
	DefaultBatch     = 100
	DefaultClaimIdle = 30 * time.Second
)

// maxBlock bounds one blocking read of a log, so that Run sees its
// context end within it.
const maxBlock = time.Second

// PersisterConfig describes where and how a Persister writes.
type PersisterConfig struct {
	// Store is the Config of the Stores whose claim logs the persister
	// writes: its Prefix and Shards say where the logs are, its Replicas
	// and ReplicaTimeout what the persister waits for (see
	// Config.Replicas), and its Observer is told of each batch written
	// and each error met (see Config.Observer).
	Store Config

	// DB is the database the claims go to, with Schema in place (see
	// CreateSchema). Required.
	DB *sql.DB

	// Dialect is DB's SQL dialect: SQLite or Postgres. Required.
	Dialect Dialect

	// Group is the logs' consumer group, shared by every persister of the
	// Store's Config. Default DefaultGroup. There is one database per
	// Store: an entry written is deleted from the log, so a second group
	// would miss it.
	Group string

	// Consumer names this persister in the group. A persister that
	// restarts under the same name finishes its own unacked entries
	// first; one under a new name leaves them to be reclaimed after
	// ClaimIdle. Default: host name and process id.
	Consumer string

	// Batch is the most log entries written in one transaction; an entry
	// of Grabs that shared a script call holds up to 64 claims. Between
	// 1 and 10,000; default DefaultBatch.
	Batch int

	// ClaimIdle is how long an entry may stay unacked with another
	// consumer, which may have died mid-batch, before this one reclaims
	// it (XAUTOCLAIM) and writes it. At least 10ms; default
	// DefaultClaimIdle.
	ClaimIdle time.Duration

	// OnExpired, if set, is called once an expired packet's unclaimed
	// shares are committed to the database, so that they can be refunded,
	// and before the entry is acked. It is called at least once per
	// packet: again if the persister stops before its ack reaches Redis.
	// Refund idempotently, by packet id.
	OnExpired func(Expiry)

	// OnError, if set, is called with each error Run meets and retries
	// (Redis or the database down, an entry no script wrote).
	OnError func(error)
}

// A Persister copies a Store's claim logs into a SQL database: every
// packet created, every claim taken, and, once a packet expires, its
// unclaimed shares (see Expiry). Each claim Grab returned reaches the
// database exactly once as a row, even when the persister, the
// application or the database stops mid-batch. Several persisters, in one
// process or many, may share the work.
//
// A Persister is safe for concurrent use. A zero or nil Persister, one not
// made by NewPersister, returns ErrInvalidConfig from every method.
type Persister struct {
	store *Store
	cfg   PersisterConfig
}

// NewPersister returns a Persister that writes to cfg.DB the claim logs
// of the Stores of cfg.Store on client's servers. It returns an error
// matching ErrInvalidConfig, naming the field, for a nil client (untyped,
// or a typed nil) or a cfg that cannot work. It does not contact Redis or
// the database.
func NewPersister(client redis.UniversalClient, cfg PersisterConfig) (*Persister, error) {
	store, err := newStore(client, cfg.Store)
	if err != nil {
		return nil, keyless("NewPersister", err)
	}
	cfg.Store = store.cfg
	if cfg.Group == "" {
		cfg.Group = DefaultGroup
	}
	if cfg.Consumer == "" {
		host, _ := os.Hostname()
		cfg.Consumer = host + "-" + strconv.Itoa(os.Getpid())
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.ClaimIdle == 0 {
		cfg.ClaimIdle = DefaultClaimIdle
	}
	switch {
	case cfg.DB == nil:
		err = errs.Config("DB is nil")
	case cfg.Dialect != SQLite && cfg.Dialect != Postgres:
		err = errs.Config("Dialect is %v, must be SQLite or Postgres", cfg.Dialect)
	case cfg.Batch < 1 || cfg.Batch > 10_000:
		err = errs.Config("Batch is %d, must be 1 to 10000", cfg.Batch)
	case cfg.ClaimIdle < 10*time.Millisecond:
		err = errs.Config("ClaimIdle is %v, must be at least 10ms", cfg.ClaimIdle)
	}
	if err != nil {
		return nil, keyless("NewPersister", err)
	}
	return &Persister{store: store, cfg: cfg}, nil
}

// usable reports whether NewPersister made p.
func (p *Persister) usable() bool { return p != nil && p.store.usable() }

// Run writes the logs to the database as entries arrive, without
// polling, until ctx is done, and then returns nil, within a second. An
// error from Redis or the database goes to OnError and is retried, after
// a pause that doubles from 50ms to 5s. It returns an error, having done
// nothing, only for a Persister not made by NewPersister or a nil ctx.
func (p *Persister) Run(ctx context.Context) error {
	if err := checkKeyless(ctx, p.usable(), "Run"); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for n := range p.store.cfg.Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.runShard(ctx, p.store.cfg.shardN(n))
		}()
	}
	wg.Wait()
	return nil
}

// runShard is Run for one shard.
func (p *Persister) runShard(ctx context.Context, sh shard) {
	st := &shardState{method: "Run", pending: true}
	pause := time.Duration(0)
	for ctx.Err() == nil {
		_, err := p.step(ctx, sh, st, true)
		if err == nil {
			pause = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		p.report(ctx, sh, st, err)
		st.pending, st.grouped = true, false
		pause = min(max(2*pause, 50*time.Millisecond), 5*time.Second)
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// Drain writes, without waiting, every entry the logs hold for this
// persister now, expires every packet that is due, and returns the number
// of entries written (as Pending counts them). It stops at the first error. An entry is written
// once however often Drain runs, so after any error call it again. Tests,
// tools and shutdowns use it; a service runs Run.
func (p *Persister) Drain(ctx context.Context) (int, error) {
	if err := checkKeyless(ctx, p.usable(), "Drain"); err != nil {
		return 0, err
	}
	total := 0
	for n := range p.store.cfg.Shards {
		st := &shardState{method: "Drain", pending: true}
		for {
			sh := p.store.cfg.shardN(n)
			written, err := p.step(ctx, sh, st, false)
			total += written
			if err != nil {
				p.observeError(ctx, sh, st, err)
				return total, err
			}
			if written == 0 && !st.pending && st.swept {
				break
			}
		}
	}
	return total, nil
}

// shardState is what a persister remembers of one shard between steps.
type shardState struct {
	method      string    // the method that steps: "Run" or "Drain"
	grouped     bool      // the consumer group exists
	pending     bool      // own unacked entries may be left
	reclaimed   time.Time // end of the last full scan for others' idle entries
	cursor      string    // where the scan for others' idle entries goes on
	swept       bool      // no packet was due at the last sweep
	nextDue     time.Time // local time at which to sweep again
	nextDueKnow bool      // nextDue holds; false: sweep at the next step
}

// step does the next piece of a shard's work: its own unacked entries,
// others' idle entries, due packets, or new entries, in that order of
// priority. With wait, the read of new entries blocks until one arrives
// or the next packet is due. It returns the entries written.
func (p *Persister) step(ctx context.Context, sh shard, st *shardState, wait bool) (int, error) {
	c := p.store.base.Client
	if !st.grouped {
		err := c.XGroupCreateMkStream(ctx, sh.log(), p.cfg.Group, "0").Err()
		if err != nil && !isBusyGroup(err) {
			return 0, p.fail(ctx, st, "group", sh, err)
		}
		st.grouped = true
	}
	if st.pending {
		msgs, err := p.read(ctx, sh, st, "0", -1)
		if err != nil {
			return 0, err
		}
		if len(msgs) == 0 {
			st.pending = false
		}
		return p.write(ctx, sh, st, msgs)
	}
	if time.Since(st.reclaimed) >= p.cfg.ClaimIdle/2 {
		msgs, err := p.reclaim(ctx, sh, st)
		if err != nil {
			return 0, err
		}
		if len(msgs) > 0 {
			return p.write(ctx, sh, st, msgs) // look again at once: there may be more
		}
	}
	if !st.nextDueKnow || !time.Now().Before(st.nextDue) {
		if err := p.sweep(ctx, sh, st); err != nil {
			return 0, err
		}
		if !st.swept {
			return 0, nil // more packets to expire; their entries come next
		}
	}
	block := time.Duration(-1)
	if wait {
		block = maxBlock
		if st.nextDueKnow {
			block = min(block, max(time.Until(st.nextDue), time.Millisecond))
		}
	}
	msgs, err := p.read(ctx, sh, st, ">", block)
	if err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		// Nothing new: look at this consumer's own unacked entries before
		// waiting again. A read or a reclaim whose reply was lost, and
		// which go-redis sent again, left the entries its first run took
		// there; this finds them once the log is quiet, at the cost of a
		// read that finds nothing when none was lost.
		st.pending = true
		return 0, nil
	}
	return p.write(ctx, sh, st, msgs)
}

// read reads up to Batch entries of sh's log: from "0", this consumer's
// unacked ones; from ">", new ones, waiting up to block (none when
// negative).
func (p *Persister) read(ctx context.Context, sh shard, st *shardState, from string, block time.Duration) ([]redis.XMessage, error) {
	streams, err := p.store.base.Client.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: p.cfg.Group, Consumer: p.cfg.Consumer, Streams: []string{sh.log(), from},
		Count: int64(p.cfg.Batch), Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, p.fail(ctx, st, "read", sh, err)
	}
	if len(streams) == 0 {
		return nil, nil
	}
	return streams[0].Messages, nil
}

// reclaim takes over up to Batch entries that other consumers have left
// unacked for ClaimIdle, scanning the group's pending list from where the
// last scan stopped; a scan that reaches its end marks the time.
func (p *Persister) reclaim(ctx context.Context, sh shard, st *shardState) ([]redis.XMessage, error) {
	if st.cursor == "" {
		st.cursor = "0-0"
	}
	// XAUTOCLAIM looks at up to 10 times Count pending entries a call.
	for range 100 {
		msgs, next, err := p.store.base.Client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: sh.log(), Group: p.cfg.Group, Consumer: p.cfg.Consumer,
			MinIdle: p.cfg.ClaimIdle, Start: st.cursor, Count: int64(p.cfg.Batch),
		}).Result()
		if err != nil {
			return nil, p.fail(ctx, st, "reclaim", sh, err)
		}
		st.cursor = next
		if next == "0-0" {
			st.reclaimed = time.Now()
		}
		if len(msgs) > 0 || next == "0-0" {
			return msgs, nil
		}
	}
	return nil, nil
}

// sweep expires sh's packets that are due, up to Batch of them, and
// learns when the next one is due.
func (p *Persister) sweep(ctx context.Context, sh shard, st *shardState) error {
	st.swept, st.nextDueKnow = false, false
	for range p.cfg.Batch {
		ids, err := p.store.base.Client.ZRange(ctx, sh.due(), 0, 0).Result()
		if err != nil {
			return p.fail(ctx, st, "sweep", sh, err)
		}
		if len(ids) == 0 {
			// None to expire: look again after ClaimIdle, or as soon as
			// this persister writes a packet's creation.
			st.swept, st.nextDueKnow = true, true
			st.nextDue = time.Now().Add(p.cfg.ClaimIdle)
			return nil
		}
		notYet, wait, err := p.runExpire(ctx, sh, ids[0])
		var refused redis.Error
		if errors.As(err, &refused) && strings.Contains(refused.Error(), "WRONGTYPE") {
			// The packet's key holds something else, for good: report it,
			// and let it not stop the sweep. Any other error (OOM, BUSY,
			// LOADING) passes, and the sweep is tried again.
			p.report(ctx, sh, st, p.fail(ctx, st, "expire "+strconv.Quote(ids[0]), sh, err))
			if err := p.store.base.Client.ZRem(ctx, sh.due(), ids[0]).Err(); err != nil {
				return p.fail(ctx, st, "sweep", sh, err)
			}
			continue
		}
		if err != nil {
			return p.fail(ctx, st, "expire", sh, err)
		}
		if notYet {
			// Look again by ClaimIdle at the latest: a packet created
			// meanwhile may be due sooner, its creation read by a
			// persister that died.
			st.swept, st.nextDueKnow = true, true
			st.nextDue = time.Now().Add(min(wait, p.cfg.ClaimIdle))
			return nil
		}
	}
	return nil
}

// write commits msgs to the database in one transaction, reports the
// expiries among them, then acks and deletes them in the log. A packet
// created among them makes the next step sweep. An entry no script wrote
// is acked and reported, never written.
func (p *Persister) write(ctx context.Context, sh shard, st *shardState, msgs []redis.XMessage) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	c := p.store.base.Begin(st.method, sh.log(), p.cfg.Consumer, int64(len(msgs)), 0)
	entries := make([]entry, 0, len(msgs))
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		ids = append(ids, m.ID)
		if m.Values == nil {
			continue // deleted while unacked: written before
		}
		e, err := parseEntry(m)
		if err != nil {
			p.report(ctx, sh, st, errs.Op(st.method, sh.log(), err))
			continue
		}
		entries = append(entries, e)
	}
	if p.store.cfg.Replicas > 0 {
		// Commit only what a failover would keep.
		if err := p.runSync(ctx, sh); err != nil {
			return 0, p.fail(ctx, st, "sync", sh, err)
		}
	}
	if err := p.commit(ctx, entries); err != nil {
		return 0, errs.Op(st.method, sh.log(), &stepError{fmt.Sprintf("write %d log entries", len(entries)), err})
	}
	// Expiries are reported before the ack: a persister that stops in
	// between reports again.
	for _, e := range entries {
		switch {
		case e.kind == "p":
			st.nextDueKnow = false // a new packet: learn when it is due
		case e.kind == "x" && p.cfg.OnExpired != nil:
			p.cfg.OnExpired(Expiry{PacketID: e.packet.id, Shares: e.packet.leftShares,
				Amount: e.packet.leftAmount, At: time.UnixMilli(e.packet.expired)})
		}
	}
	if err := p.runAck(ctx, sh, ids); err != nil {
		return 0, p.fail(ctx, st, "ack", sh, err)
	}
	c.Done(ctx)
	return len(ids), nil
}

// report passes err, met by a step of st on sh, to OnError and the
// Observer.
func (p *Persister) report(ctx context.Context, sh shard, st *shardState, err error) {
	p.observeError(ctx, sh, st, err)
	if p.cfg.OnError != nil {
		p.cfg.OnError(err)
	}
}

// observeError tells the Observer of err, met by a step of st on sh.
func (p *Persister) observeError(ctx context.Context, sh shard, st *shardState, err error) {
	c := p.store.base.Begin(st.method, sh.log(), p.cfg.Consumer, 0, 0)
	c.Failed(ctx, err)
}

// fail names, in err, the method that stepped, the log and the step op
// that failed: `redpacket: drain "{redpacket:0}:redpacket:log": read: ...`.
func (p *Persister) fail(ctx context.Context, st *shardState, op string, sh shard, err error) error {
	return errs.Call(ctx, st.method, sh.log(), &stepError{op, err})
}

// A stepError is the error err of a persister's step op.
type stepError struct {
	op  string
	err error
}

func (e *stepError) Error() string {
	return e.op + ": " + strings.TrimPrefix(e.err.Error(), "redpacket: ")
}
func (e *stepError) Unwrap() error { return e.err }

func isBusyGroup(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply) && len(reply.Error()) >= 9 && reply.Error()[:9] == "BUSYGROUP"
}

// Pending returns the number of log entries, over every shard, not yet in
// the database: 0 means the database has every claim taken so far. The
// claims of Grabs that shared a script call (see
// Config.DisableCoalescing) are one entry. It only reads, so it may be
// called again after any error.
func (p *Persister) Pending(ctx context.Context) (int64, error) {
	if err := checkKeyless(ctx, p.usable(), "Pending"); err != nil {
		return 0, err
	}
	var total int64
	for n := range p.store.cfg.Shards {
		sh := p.store.cfg.shardN(n)
		l, err := p.store.base.Client.XLen(ctx, sh.log()).Result()
		if err != nil {
			return 0, errs.Call(ctx, "Pending", sh.log(), err)
		}
		total += l
	}
	return total, nil
}
