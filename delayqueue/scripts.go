package delayqueue

import (
	"context"
	"embed"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each atomic operation is one Lua script in scripts/, run with EVALSHA,
// and EVAL when the server answers NOSCRIPT. Every script takes the
// queue's keys, q.keys, in the order of keys.go, and includes lib.lua,
// and wake.lua and give.lua where it needs them. Every reply leads with a
// status. Below, each script's ARGV is built, and its reply read, in one
// place.

//go:embed scripts
var scriptFiles embed.FS

var (
	pushScript    = script.Load(scriptFiles, "scripts/push.lua")
	pollScript    = script.Load(scriptFiles, "scripts/poll.lua")
	pollsScript   = script.Load(scriptFiles, "scripts/polls.lua")
	leaveScript   = script.Load(scriptFiles, "scripts/leave.lua")
	ackScript     = script.Load(scriptFiles, "scripts/ack.lua")
	acksScript    = script.Load(scriptFiles, "scripts/acks.lua")
	nackScript    = script.Load(scriptFiles, "scripts/nack.lua")
	extendScript  = script.Load(scriptFiles, "scripts/extend.lua")
	lenScript     = script.Load(scriptFiles, "scripts/len.lua")
	deadScript    = script.Load(scriptFiles, "scripts/dead.lua")
	requeueScript = script.Load(scriptFiles, "scripts/requeue.lua")
	dropScript    = script.Load(scriptFiles, "scripts/drop.lua")

	messagesScript = script.Load(scriptFiles, "scripts/messages.lua")
	cancelScript   = script.Load(scriptFiles, "scripts/cancel.lua")
)

// The statuses that lead a reply.
const (
	statusNotHeld = 0 // the delivery no longer holds its lease
	statusDone    = 1 // done as asked
	statusWait    = 2 // nothing due: the field is how long to sleep
)

// run runs s on the queue's keys with args for method, and returns its
// reply to read, or the call's error, named.
func (q *Queue) run(ctx context.Context, method string, s *script.Script, args ...any) (kernel.Reply, error) {
	v, err := q.base.Runner.Run(ctx, s, q.keys, args...).Result()
	if err != nil {
		return kernel.Reply{}, errs.Call(ctx, method, q.base.Key, err)
	}
	return kernel.ReadReply(v), nil
}

// push.lua: ARGV notify, then for each job its id, its push token
// (token for a job whose ID the caller gave, else empty), payload, delay
// (ms) and due time (ms, 0: now plus the delay). Reply {1, queued, the
// 1-based indexes of the jobs whose ID another push had queued...}, in
// order. The jobs of many calls, each with its own token, make one call
// (see pushChunk).

// appendPushArgs appends the ARGV of jobs, with ids, of a call whose
// push token is token, to args.
func appendPushArgs(args []any, token string, jobs []Job, ids []string) []any {
	var given any = token // boxed once
	for i, job := range jobs {
		tok := any("")
		if job.ID != "" {
			tok = given
		}
		payload := job.Payload
		if payload == nil {
			payload = []byte{}
		}
		at := int64(0)
		if !job.At.IsZero() {
			at = job.At.UnixMilli()
		}
		args = append(args, ids[i], tok, payload, ms(job.Delay), strconv.FormatInt(at, 10))
	}
	return args
}

// decodePush returns the 0-based indexes, of n jobs, of those whose ID
// another push had queued.
func decodePush(r kernel.Reply, n int) ([]int, error) {
	queued := r.Int(0)
	r.Want(r.Status() == statusDone && queued >= 0 && queued <= int64(n) && r.Len() <= 1+n)
	var dups []int
	for i := 1; i < r.Len(); i++ {
		k := r.Int(i)
		r.Want(k >= 1 && k <= int64(n) && (len(dups) == 0 || int(k-1) > dups[len(dups)-1]))
		dups = append(dups, int(k-1))
	}
	return dups, r.Err()
}

// poll.lua: ARGV token, visibility, max attempts, registration, refresh,
// notify, waiting. Reply {1, id, payload, attempt, due ms, deadline ms}
// or {2, ms to wait}.

// pollOnce runs poll.lua with token as the delivery's token, and returns
// a message, or how long to wait. A call with waiting false, the first
// of a Poll, neither registers the consumer as a waiter nor reads the
// waiters: it takes a due message, or answers that nothing is due (wait
// 0). Its error is the call's, not named.
func (q *Queue) pollOnce(ctx context.Context, token string, waiting bool) (Message, time.Duration, error) {
	flag := "0"
	if waiting {
		flag = "1"
	}
	v, err := q.base.Runner.Run(ctx, pollScript, q.keys, token, q.vis, q.max, ms(registration), ms(refresh), q.notify, flag).Result()
	if err != nil {
		return Message{}, 0, err
	}
	r := kernel.ReadReply(v)
	if r.Status() == statusWait {
		wait := r.Int(0)
		r.Want(r.Len() == 1)
		return Message{}, time.Duration(wait) * time.Millisecond, r.Err()
	}
	r.Want(r.Status() == statusDone && r.Len() == 5)
	m := readMessage(&r, 0)
	m.Token = token
	if deadline := r.Int(4); deadline > 0 {
		m.Deadline = time.UnixMilli(deadline)
	}
	if err := r.Err(); err != nil {
		return Message{}, 0, err
	}
	return m, 0, nil
}

// polls.lua: ARGV visibility, max attempts, registration, refresh,
// notify, waiting, then the calls' tokens. Reply {1, then for each call
// six fields}: poll.lua's reply, {1, id, payload, attempt, due ms,
// deadline ms} or {2, ms to wait, 0, 0, 0, 0}.

// decodePolls reads the answers to the calls of tokens into out.
func decodePolls(r kernel.Reply, tokens []string, out []pollResult) error {
	r.Want(r.Status() == statusDone && r.Len() == 6*len(tokens))
	if err := r.Err(); err != nil {
		return err
	}
	for k, token := range tokens {
		i := 6 * k
		switch r.Int(i) {
		case statusWait:
			out[k].wait = time.Duration(r.Int(i+1)) * time.Millisecond
		case statusDone:
			m := readMessage(&r, i+1)
			m.Token = token
			if deadline := r.Int(i + 5); deadline > 0 {
				m.Deadline = time.UnixMilli(deadline)
			}
			out[k].m = m
			r.Want(m.ID != "")
		default:
			r.Want(false)
		}
	}
	return r.Err()
}

// readMessage reads the fields id, payload, attempt and due ms from i on.
func readMessage(r *kernel.Reply, i int) Message {
	return Message{ID: r.String(i), Payload: []byte(r.String(i + 1)),
		Attempt: int(r.Int(i + 2)), DueAt: time.UnixMilli(r.Int(i + 3))}
}

// leave.lua: ARGV token, notify. Reply {1, was a waiter}, unread.

// leave takes a consumer whose Poll ended off the waiters, and gives back
// a delivery named by its token that the Poll never got (see leave.lua),
// detached from ctx and bounded by leaveTimeout; a consumer it cannot
// reach lapses from the waiters within the registration time.
func (q *Queue) leave(ctx context.Context, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	q.base.Runner.Run(ctx, leaveScript, q.keys, token, q.notify) //nolint:errcheck // best effort
}

// ack.lua: ARGV id, token, deadline. nack.lua: ARGV id, token, deadline,
// delay ms, max attempts, notify. extend.lua: ARGV id, token, visibility.
// Reply {1} (extend: {1, new deadline ms}), or {0} when the delivery no
// longer holds its lease.

func (q *Queue) ackArgs(m Message) []any { return []any{m.ID, m.Token, deadlineArg(m)} }

func (q *Queue) nackArgs(m Message, delay time.Duration) []any {
	return []any{m.ID, m.Token, deadlineArg(m), ms(delay), q.max, q.notify}
}

func (q *Queue) extendArgs(m Message) []any { return []any{m.ID, m.Token, q.vis} }

// deadlineArg is m's lease deadline as the scripts take it: ms on the
// server's clock, 0 when unknown.
func deadlineArg(m Message) string {
	if m.Deadline.IsZero() || m.Deadline.After(maxAt) {
		return "0"
	}
	return strconv.FormatInt(max(m.Deadline.UnixMilli(), 0), 10)
}

// decodeSettle returns whether the delivery held its lease, and extend's
// new deadline (ms).
func decodeSettle(r kernel.Reply) (held bool, deadline int64, err error) {
	switch {
	case r.Status() == statusNotHeld:
		r.Want(r.Len() == 0)
	case r.Len() == 1:
		held, deadline = true, r.Int(0)
		r.Want(r.Status() == statusDone)
	default:
		held = true
		r.Want(r.Status() == statusDone && r.Len() == 0)
	}
	return held, deadline, r.Err()
}

// acks.lua: ARGV id, token, deadline of each delivery. Reply {1, then
// 1 or 0 for each}: whether it held its lease.

func decodeAcks(r kernel.Reply, n int) ([]bool, error) {
	r.Want(r.Status() == statusDone && r.Len() == n)
	held := make([]bool, r.Len())
	for i := range held {
		h := r.Int(i)
		r.Want(h == 0 || h == 1)
		held[i] = h == 1
	}
	return held, r.Err()
}

// len.lua: no ARGV. Reply {1, ready, delayed, in flight, dead}.

func decodeLen(r kernel.Reply) (counts [4]int64, err error) {
	r.Want(r.Status() == statusDone && r.Len() == len(counts))
	for i := range counts {
		counts[i] = r.Int(i)
	}
	return counts, r.Err()
}

// dead.lua: ARGV n. Reply {1, id, payload, attempts, dead-lettered at
// ms, ...}, oldest first.

func decodeDead(r kernel.Reply) ([]Message, error) {
	r.Want(r.Status() == statusDone && r.Len()%4 == 0)
	dead := make([]Message, 0, r.Len()/4)
	for i := 0; i+4 <= r.Len(); i += 4 {
		dead = append(dead, readMessage(&r, i))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return dead, nil
}

// messages.lua: ARGV state, offset, count. Reply {1, id, payload,
// deliveries, time ms, lease deadline ms, ...}.

func decodeMessages(r kernel.Reply) ([]Message, error) {
	r.Want(r.Status() == statusDone && r.Len()%5 == 0)
	msgs := make([]Message, 0, r.Len()/5)
	for i := 0; i+5 <= r.Len(); i += 5 {
		m := readMessage(&r, i)
		if deadline := r.Int(i + 4); deadline > 0 {
			m.Deadline = time.UnixMilli(deadline)
		}
		r.Want(m.ID != "" && m.Attempt >= 0)
		msgs = append(msgs, m)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return msgs, nil
}

// cancel.lua: KEYS the queue's keys, then the call's record. ARGV the
// record's life (ms), then the ids. Reply {1, count}.

// requeue.lua: ARGV notify, then the ids. drop.lua: ARGV the ids. Reply
// {1, count}.

func idArgs(first any, ids []string) []any {
	args := make([]any, 0, 1+len(ids))
	if first != nil {
		args = append(args, first)
	}
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// decodeCount reads a count from 0 to most.
func decodeCount(r kernel.Reply, most int) (int, error) {
	n := r.Int(0)
	r.Want(r.Status() == statusDone && r.Len() == 1 && n >= 0 && n <= int64(most))
	return int(n), r.Err()
}

// ms is d in whole milliseconds, as the scripts take it.
func ms(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
