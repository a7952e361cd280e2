package delayqueue

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadScripts caches every script of the package on each master of client.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	load := func(ctx context.Context, c *redis.Client) error {
		for _, s := range []*redis.Script{pushScript.Script, pollScript.Script, pollsScript.Script, leaveScript.Script, ackScript.Script, acksScript.Script,
			nackScript.Script, extendScript.Script, lenScript.Script, deadScript.Script, requeueScript.Script, dropScript.Script,
			messagesScript.Script, cancelScript.Script} {
			if err := s.Load(ctx, c).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	if cluster, ok := client.(*redis.ClusterClient); ok {
		return cluster.ForEachMaster(ctx, load)
	}
	return load(ctx, client.(*redis.Client))
}

// ScriptHash returns the SHA1 of the script of the named operation, as
// EVALSHA sends it, so that a test can lose the reply to that one.
func ScriptHash(op string) string {
	return map[string]string{
		"push": pushScript.Hash(), "poll": pollScript.Hash(), "polls": pollsScript.Hash(), "leave": leaveScript.Hash(),
		"ack": ackScript.Hash(), "acks": acksScript.Hash(), "nack": nackScript.Hash(), "extend": extendScript.Hash(),
		"requeue": requeueScript.Hash(), "drop": dropScript.Hash(), "cancel": cancelScript.Hash(),
	}[op]
}

// PollBatch sends the calls of Polls named by tokens, all with the
// waiting flag waiting, as one batch, as concurrent Polls do, and returns
// the message each took (none: a zero Message) or the batch's error.
func PollBatch(ctx context.Context, q *Queue, waiting bool, tokens ...string) ([]Message, error) {
	calls := make([]pollCall, len(tokens))
	for i, t := range tokens {
		calls[i] = pollCall{token: t, done: make(chan struct{})}
	}
	res, err := q.sendPolls(ctx, waiting, calls)
	if err != nil {
		return nil, err
	}
	out := make([]Message, len(res))
	for i, r := range res {
		out[i] = r.m
	}
	return out, nil
}

// AckBatch sends the Acks of ms as one batch, as concurrent Acks do, and
// returns whether each held its lease, or the batch's error.
func AckBatch(ctx context.Context, q *Queue, ms ...Message) ([]bool, error) {
	res, _ := q.sendAcks(ctx, struct{}{}, ms)
	held := make([]bool, len(res))
	for i, r := range res {
		if r.err != nil {
			return nil, r.err
		}
		if r.bad != nil {
			return nil, r.bad
		}
		held[i] = r.held
	}
	return held, nil
}
