package delayqueue

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/notice"
	"github.com/slotlimit/slotlimit/internal/observe"
	"github.com/slotlimit/slotlimit/internal/script"
	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

const (
	// registration is how long a waiting consumer stays registered
	// without polling again, so that a consumer that died stops being
	// woken then.
	registration = 3 * time.Second
	// refresh is the longest a waiting consumer sleeps between polls:
	// an idle consumer costs Redis one command a second.
	refresh = time.Second
)

// A Queue is a delay queue shared by every process that uses its Key.
// Push schedules a message, due after a delay on the server's clock; Poll
// waits until one is due and leases it to the caller, who must Ack it
// before the lease (Config.Visibility) lapses, or it is delivered again.
// Run is the consumer loop most callers want.
//
// A Queue is safe for concurrent use.
type Queue struct {
	client  redis.UniversalClient
	runner  script.Runner
	cfg     Config
	keys    []string // see keyNames
	channel string   // the notice channel
	notices *notice.Site

	// Script arguments, boxed once: the notice command and channel, the
	// lease time and max attempts.
	notify, vis, max any
}

// New returns a Queue for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. New does not
// contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Queue, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	if script.IsNil(client) {
		return nil, invalidConfig("client is nil")
	}
	keys, channel, ok := keyNames(cfg.Key)
	if !ok {
		return nil, invalidConfig("Key %q has a '}' but no hash tag", cfg.Key)
	}
	notify := notice.Command(client) + " "
	return &Queue{
		client:  client,
		runner:  script.Runner{Client: client},
		cfg:     cfg,
		keys:    keys,
		channel: channel,
		notices: waitqueue.Notices.Site(client),
		notify:  notify + channel,
		vis:     strconv.FormatInt(cfg.Visibility.Milliseconds(), 10),
		max:     strconv.Itoa(cfg.MaxAttempts),
	}, nil
}

// Config returns the Queue's configuration, with the defaults filled in;
// the zero Config for a zero or nil Queue.
func (q *Queue) Config() Config {
	if q == nil {
		return Config{}
	}
	return q.cfg
}

// begin starts observing a call of method, for holder and units.
func (q *Queue) begin(method, holder string, units int64) observe.Call {
	return observe.Begin(q.cfg.Observer, "delayqueue", method, q.cfg.Key, holder, units, 0)
}

// usable returns the error of a call to a zero or nil Queue, or with a
// nil ctx.
func (q *Queue) usable(ctx context.Context) error {
	switch {
	case q == nil || q.client == nil:
		return errUnusable
	case ctx == nil:
		return errNilContext
	}
	return nil
}

// run runs s on the queue's keys, and names the operation op in an error.
func (q *Queue) run(ctx context.Context, op string, s *script.Script, args ...any) (any, error) {
	reply, err := q.runner.Run(ctx, s, q.keys, args...).Result()
	if err != nil {
		return nil, q.fail(ctx, op, err)
	}
	return reply, nil
}

// fail returns the error of operation op, naming the queue.
func (q *Queue) fail(ctx context.Context, op string, err error) error {
	return callerr.Call(ctx, "delayqueue", op, q.cfg.Key, err)
}

// refuse returns the error of operation op whose outcome is known, naming
// the queue: input it refused with nothing sent, or a reply it read.
func (q *Queue) refuse(op string, err error) error {
	return callerr.Op("delayqueue", op, q.cfg.Key, err)
}

// Len counts the queue's messages: ready (due by the server's clock and
// not delivered), delayed (not due yet), in flight (delivered and not
// acked; a lapsed lease counts here until a Poll gives its message back)
// and dead letters, all read at one instant. It writes nothing.
func (q *Queue) Len(ctx context.Context) (ready, delayed, inflight, dead int64, err error) {
	if err := q.usable(ctx); err != nil {
		return 0, 0, 0, 0, err
	}
	reply, err := q.run(ctx, "len", lenScript)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	counts, err := decodeLen(reply)
	if err != nil {
		return 0, 0, 0, 0, q.refuse("len", err)
	}
	return counts[0], counts[1], counts[2], counts[3], nil
}

// ms is d in whole milliseconds, as the scripts take it.
func ms(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
