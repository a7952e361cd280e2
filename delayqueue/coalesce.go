package delayqueue

import (
	"context"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// Concurrent calls of one kind on a Queue go to Redis together, unless
// Config.DisableCoalescing makes each Group send every call alone: the
// Pushes, PushAts and PushBatches, as one push.lua call; the calls of
// Polls, those of the same waiting flag, as one polls.lua call; and the
// Acks, as one acks.lua call. A batch of one call is sent as the call
// alone is, with its own script.

// The most calls in one batch, so that no batch's script holds Redis for
// long: well under a millisecond at these sizes.
const (
	maxPushCalls = 64
	maxPollCalls = 64
	maxAckCalls  = 64
)

// The most jobs, and payload bytes, of the calls that one push.lua call
// joins; a single call above them is sent alone.
const (
	maxPushJobs  = 256
	maxPushBytes = 1 << 20
)

// A pushCall is one call of push: its jobs, their IDs, and its push token.
type pushCall struct {
	token string
	jobs  []Job
	ids   []string
	size  int // the jobs' payload bytes
}

// A pushResult is the answer to one pushCall: the 0-based indexes of its
// jobs whose ID another push queued, or the error of its script call
// (err, not named) or of its reply (bad).
type pushResult struct {
	dups     []int
	err, bad error
}

// sendPush sends c through q.pushes and returns its answer; err is the
// call's error, not named.
func (q *Queue) sendPush(ctx context.Context, c pushCall) (pushResult, error) {
	return q.pushes.Do(ctx, struct{}{}, c)
}

// sendPushes sends calls, in order, in as few push.lua calls as
// maxPushJobs and maxPushBytes allow. It never fails as a whole: each
// call's result holds its own error.
func (q *Queue) sendPushes(ctx context.Context, _ struct{}, calls []pushCall) ([]pushResult, error) {
	out := make([]pushResult, len(calls))
	for start := 0; start < len(calls); {
		end, jobs, size := start+1, len(calls[start].jobs), calls[start].size
		for end < len(calls) && jobs+len(calls[end].jobs) <= maxPushJobs && size+calls[end].size <= maxPushBytes {
			jobs += len(calls[end].jobs)
			size += calls[end].size
			end++
		}
		q.pushChunk(ctx, calls[start:end], jobs, out[start:end])
		start = end
	}
	return out, nil
}

// pushChunk sends calls, of jobs jobs together, as one push.lua call, and
// writes each call's answer in out.
func (q *Queue) pushChunk(ctx context.Context, calls []pushCall, jobs int, out []pushResult) {
	args := make([]any, 0, 1+5*jobs)
	args = append(args, q.notify)
	for _, c := range calls {
		args = appendPushArgs(args, c.token, c.jobs, c.ids)
	}
	v, err := q.base.Runner.Run(ctx, pushScript, q.keys, args...).Result()
	if err != nil {
		for i := range out {
			out[i].err = err
		}
		return
	}
	dups, err := decodePush(kernel.ReadReply(v), jobs)
	if err != nil {
		for i := range out {
			out[i].bad = err
		}
		return
	}
	first, k := 0, 0 // the first job of call i; the next of dups
	for i, c := range calls {
		for k < len(dups) && dups[k] < first+len(c.jobs) {
			out[i].dups = append(out[i].dups, dups[k]-first)
			k++
		}
		first += len(c.jobs)
	}
}

// A pollResult is the answer to one call of a Poll: a message, or how
// long to wait, or the call's error, not named.
type pollResult struct {
	m    Message
	wait time.Duration
	err  error
}

// A pollCall is one call of a Poll: its token, and a channel closed once
// the script call that carried it has returned.
type pollCall struct {
	token string
	done  chan struct{}
}

// sendPoll is pollOnce through q.polls. A call whose ctx ended while its
// batch was in flight returns once the batch has, or after leaveTimeout,
// so that the leave that follows (see poll) runs after the script that
// may have made its delivery, and gives it back.
func (q *Queue) sendPoll(ctx context.Context, token string, waiting bool) (Message, time.Duration, error) {
	c := pollCall{token: token, done: make(chan struct{})}
	res, err := q.polls.Do(ctx, waiting, c)
	if err != nil {
		if callerr.OutcomeUnknown(err) {
			t := time.NewTimer(leaveTimeout)
			select {
			case <-c.done:
			case <-t.C:
			}
			t.Stop()
		}
		return Message{}, 0, err
	}
	return res.m, res.wait, res.err
}

// sendPolls sends the calls of Polls, all with the waiting flag waiting:
// one alone as pollOnce, more as one polls.lua call.
func (q *Queue) sendPolls(ctx context.Context, waiting bool, calls []pollCall) ([]pollResult, error) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	tokens := make([]string, len(calls))
	for i, c := range calls {
		tokens[i] = c.token
	}
	out := make([]pollResult, len(tokens))
	if len(tokens) == 1 {
		out[0].m, out[0].wait, out[0].err = q.pollOnce(ctx, tokens[0], waiting)
		return out, nil
	}
	flag := "0"
	if waiting {
		flag = "1"
	}
	args := make([]any, 0, 6+len(tokens))
	args = append(args, q.vis, q.max, ms(registration), ms(refresh), q.notify, flag)
	for _, t := range tokens {
		args = append(args, t)
	}
	v, err := q.base.Runner.Run(ctx, pollsScript, q.keys, args...).Result()
	if err != nil {
		return nil, err
	}
	if err := decodePolls(kernel.ReadReply(v), tokens, out); err != nil {
		return nil, err
	}
	return out, nil
}

// An ackResult is the answer to one Ack's call: whether its delivery held
// its lease, or the error of the script call (err, not named) or of its
// reply (bad).
type ackResult struct {
	held     bool
	err, bad error
}

// sendAck sends m's Ack through q.acks.
func (q *Queue) sendAck(ctx context.Context, m Message) (ackResult, error) {
	return q.acks.Do(ctx, struct{}{}, m)
}

// sendAcks sends the Acks of ms: one alone with ack.lua, more as one
// acks.lua call. It never fails as a whole: each result holds its error.
func (q *Queue) sendAcks(ctx context.Context, _ struct{}, ms []Message) ([]ackResult, error) {
	out := make([]ackResult, len(ms))
	var v any
	var err error
	if len(ms) == 1 {
		v, err = q.base.Runner.Run(ctx, ackScript, q.keys, q.ackArgs(ms[0])...).Result()
	} else {
		args := make([]any, 0, 3*len(ms))
		for _, m := range ms {
			args = append(args, q.ackArgs(m)...)
		}
		v, err = q.base.Runner.Run(ctx, acksScript, q.keys, args...).Result()
	}
	if err != nil {
		for i := range out {
			out[i].err = err
		}
		return out, nil
	}
	r := kernel.ReadReply(v)
	if len(ms) == 1 {
		out[0].held, _, out[0].bad = decodeSettle(r)
		return out, nil
	}
	held, bad := decodeAcks(r, len(ms))
	for i := range out {
		if bad != nil {
			out[i].bad = bad
		} else {
			out[i].held = held[i]
		}
	}
	return out, nil
}
