package delayqueue

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/notice"
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
	base    kernel.Base
	cfg     Config
	keys    []string // the queue's keys, in the order of keys.go
	channel string   // the notice channel
	records string   // the prefix of the names of Cancel's records
	notices *notice.Site

	// Script arguments, boxed once: the notice command and channel, the
	// lease time and max attempts.
	notify, vis, max any

	// The concurrent calls of each kind, joined into batches, or each
	// sent alone with Config.DisableCoalescing (see coalesce.go).
	pushes coalesce.Group[struct{}, pushCall, pushResult]
	polls  coalesce.Group[bool, pollCall, pollResult] // keyed by the calls' waiting flag
	acks   coalesce.Group[struct{}, Message, ackResult]
}

// New returns a Queue for cfg. It returns an error matching
// ErrInvalidConfig when client is nil or cfg is invalid. New does not
// contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Queue, error) {
	b, err := errs.New(client, kernel.Settings{Keyed: true, Key: cfg.Key, Sides: sides[:], Observer: cfg.Observer})
	if err != nil {
		return nil, err
	}
	if cfg, err = cfg.check(); err != nil {
		return nil, err
	}
	channel := b.Keys[1+numKeys]
	q := &Queue{
		base:    b,
		cfg:     cfg,
		keys:    b.Keys[1 : 1+numKeys],
		channel: channel,
		records: strings.TrimSuffix(b.Keys[1+keyQueue], sides[keyQueue]) + cancelRecordSuffix,
		notices: waitqueue.Notices.Site(client),
		notify:  notice.Command(client) + " " + channel,
		vis:     strconv.FormatInt(cfg.Visibility.Milliseconds(), 10),
		max:     strconv.Itoa(cfg.MaxAttempts),
	}
	alone := cfg.DisableCoalescing
	q.pushes = coalesce.Group[struct{}, pushCall, pushResult]{Send: q.sendPushes, Max: maxPushCalls, Alone: alone}
	q.polls = coalesce.Group[bool, pollCall, pollResult]{Send: q.sendPolls, Max: maxPollCalls, Alone: alone}
	q.acks = coalesce.Group[struct{}, Message, ackResult]{Send: q.sendAcks, Max: maxAckCalls, Alone: alone}
	return q, nil
}

// Config returns the Queue's configuration, with the defaults filled in;
// the zero Config for a zero or nil Queue.
func (q *Queue) Config() Config {
	if q == nil {
		return Config{}
	}
	return q.cfg
}

// check returns the error of a call of method with ctx: on a zero or nil
// Queue, or with a nil ctx; nil when the call may go on.
func (q *Queue) check(ctx context.Context, method string) error {
	if q == nil {
		return errs.Check(ctx, false, method, "")
	}
	return errs.Check(ctx, q.base.Usable(), method, q.base.Key)
}

// refuse returns err, of method, named as every error of the queue is:
// input refused with nothing sent, or an answer read.
func (q *Queue) refuse(method string, err error) error {
	return errs.Op(method, q.base.Key, err)
}

// Len counts the queue's messages: ready (due by the server's clock and
// not delivered), delayed (not due yet), in flight (delivered and not
// acked; a lapsed lease counts here until a Poll gives its message back)
// and dead letters, all read at one instant. It writes nothing.
func (q *Queue) Len(ctx context.Context) (ready, delayed, inflight, dead int64, err error) {
	if err := q.check(ctx, "Len"); err != nil {
		return 0, 0, 0, 0, err
	}
	r, err := q.run(ctx, "Len", lenScript)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	counts, err := decodeLen(r)
	if err != nil {
		return 0, 0, 0, 0, q.refuse("Len", err)
	}
	return counts[0], counts[1], counts[2], counts[3], nil
}
