package main

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/queues"
	"github.com/slotlimit/slotlimit/delayqueue"
)

// seedPoll is the classic poll script, verbatim: it reads the head of the
// sorted set and removes it when its score is at most ARGV[1], the
// caller's time in seconds. KEYS[1] the sorted set. It replies the member
// taken, or nil.
const seedPoll = classic.DelayPoll

// seedInterval is the classic consumer's sleep after every poll.
const seedInterval = 10 * time.Millisecond

// asynqTaskType is the type of every asynq task the benchmark enqueues.
const asynqTaskType = "qbench"

// Names of the variants, in the order of the report.
const (
	nameQueue     = "slotlimit delayqueue: Push + Poll + Ack"
	nameQueueRun  = "slotlimit delayqueue: Push + Run"
	nameSeed      = "classic: ZADD + poll script every 10 ms"
	nameAsynq     = "hibiken/asynq: Enqueue + Server, defaults"
	nameAsynqFast = "hibiken/asynq: Enqueue + Server, DelayedTaskCheckInterval "
)

// Paths of the peer modules, whose versions the report names.
const (
	modAsynq   = queues.ModAsynq
	modGoRedis = "github.com/redis/go-redis/v9"
)

// A variant is one delay queue: how it pushes, and how its consumers
// start. Every variant runs on the load client, b.Client.
type variant struct {
	name string
	// commands are the top-level commands its client sends, checked in
	// every triple phase; nil for a peer whose background work sends
	// commands of its own choosing, which are listed instead.
	commands []string
	push     func(ctx context.Context, payload []byte, delay time.Duration) error
	// start starts workers consumers, which call deliver with each
	// message's payload: once it is acked, in the triple phases (for
	// asynq, as its handler runs, before asynq marks it done; for the
	// classic script, as it returns it, having no ack), and as
	// the handler begins, in the latency phases. stop stops them and
	// returns the first error a consumer met.
	start func(ctx context.Context, workers int, deliver func([]byte)) (stop func() error, err error)
}

// consumers runs workers goroutines of loop until stop, keeping the first
// error one returns while the context lives.
func consumers(ctx context.Context, workers int, loop func(ctx context.Context) error) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := loop(ctx); err != nil && ctx.Err() == nil {
				once.Do(func() { first = err })
			}
		}()
	}
	return func() error {
		cancel()
		wg.Wait()
		return first
	}
}

// queueVariant is the package's queue at key: Push, and consumers that
// Poll and Ack, or, when run is set, the package's Run.
func (b *bench) queueVariant(key string, run bool) variant {
	q, err := delayqueue.New(b.Client, delayqueue.Config{Key: b.Key(key)})
	if err != nil {
		panic(err) // a valid Config
	}
	v := variant{name: nameQueue, commands: []string{"evalsha"}}
	v.push = func(ctx context.Context, payload []byte, delay time.Duration) error {
		_, err := q.Push(ctx, payload, delay)
		return err
	}
	v.start = func(ctx context.Context, workers int, deliver func([]byte)) (func() error, error) {
		return consumers(ctx, 1, func(ctx context.Context) error {
			if run {
				return q.Run(ctx, workers, func(_ context.Context, m delayqueue.Message) error {
					deliver(m.Payload)
					return nil
				})
			}
			return pollAndAck(ctx, q, workers, deliver)
		}), nil
	}
	if run {
		v.name = nameQueueRun
	}
	return v
}

// pollAndAck runs workers loops of Poll then Ack until ctx ends, and
// returns the first error one met.
func pollAndAck(ctx context.Context, q *delayqueue.Queue, workers int, deliver func([]byte)) error {
	stop := consumers(ctx, workers, func(ctx context.Context) error {
		for ctx.Err() == nil {
			m, err := q.Poll(ctx)
			if err != nil {
				return err
			}
			if err := q.Ack(ctx, m); err != nil {
				return err
			}
			deliver(m.Payload)
		}
		return nil
	})
	<-ctx.Done()
	return stop()
}

// seedVariant is the classic scheme on the sorted set at key: the
// producer's ZADD scored by the due time in whole seconds of its clock
// (the classic System.currentTimeMillis() / 1000 + d, its delay d being
// whole seconds; here the due time's second, truncated as the classic script
// truncates), and consumers that run the poll script with the time in
// whole seconds, then sleep 10 ms, whether they took a message or not.
func (b *bench) seedVariant(key string) variant {
	key = b.Key(key)
	return variant{
		name:     nameSeed,
		commands: []string{"zadd", "evalsha"},
		push: func(ctx context.Context, payload []byte, delay time.Duration) error {
			score := float64(time.Now().Add(delay).UnixMilli() / 1000)
			return b.Client.ZAdd(ctx, key, redis.Z{Score: score, Member: payload}).Err()
		},
		start: func(ctx context.Context, workers int, deliver func([]byte)) (func() error, error) {
			return consumers(ctx, workers, func(ctx context.Context) error {
				for {
					now := strconv.FormatInt(time.Now().UnixMilli()/1000, 10)
					member, err := b.Client.EvalSha(ctx, b.seedPoll.SHA, []string{key}, now).Text()
					switch {
					case err == nil:
						deliver([]byte(member))
					case !errors.Is(err, redis.Nil):
						return err
					}
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(seedInterval):
					}
				}
			}), nil
		},
	}
}

// asynqVariant is asynq on the load client, its queue named by key:
// Client.Enqueue, with ProcessIn for a delay, and a Server of workers
// workers, with its forwarder every interval (0: its default, 5 s) and
// every other setting at its default.
func (b *bench) asynqVariant(key string, interval time.Duration) variant {
	qname := b.Key(key)
	v := variant{name: nameAsynq}
	if interval > 0 {
		v.name = nameAsynqFast + interval.String()
	}
	v.push = queues.AsynqPush(b.Client, qname, asynqTaskType)
	v.start = queues.AsynqStart(b.Client, qname, interval)
	return v
}

// tripleVariants returns the variants of the triple phases.
func (b *bench) tripleVariants() []variant {
	return []variant{
		b.queueVariant("dq:triples", false),
		b.seedVariant("seed:triples"),
		b.asynqVariant("asynq-triples", 0),
	}
}

// latencyVariants returns the variants of the latency phases.
func (b *bench) latencyVariants() []variant {
	return []variant{
		b.queueVariant("dq:latency", true),
		b.seedVariant("seed:latency"),
		b.asynqVariant("asynq-latency-default", 0),
		b.asynqVariant("asynq-latency-fast", b.due),
	}
}

// A stamp is a latency task's payload: its number and its due time, in ns
// since the epoch by the pusher's clock.
func stamp(i int, due time.Time) []byte {
	p := make([]byte, 12)
	binary.BigEndian.PutUint32(p, uint32(i))
	binary.BigEndian.PutUint64(p[4:], uint64(due.UnixNano()))
	return p
}

// unstamp reads a stamp, or false for a payload that is not one.
func unstamp(p []byte) (int, time.Time, bool) {
	if len(p) != 12 {
		return 0, time.Time{}, false
	}
	return int(binary.BigEndian.Uint32(p)), time.Unix(0, int64(binary.BigEndian.Uint64(p[4:]))), true
}
