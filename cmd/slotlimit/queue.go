package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/slotlimit/slotlimit/delayqueue"
)

// The commands of package delayqueue: queue stats, list, dead, cancel,
// requeue and drop.

// queueKind names a delay queue in the answers "no delay queue at KEY" and
// "KEY holds a Redis TYPE, not a delay queue".
const queueKind = "delay queue"

// defaultDead is how many dead letters queue dead lists without -n.
const defaultDead = 100

func deadFlags(fs *flag.FlagSet, c *cli) {
	fs.IntVar(&c.n, "n", defaultDead, fmt.Sprintf("list at most `COUNT` dead letters, from 1 to %d", delayqueue.MaxBatch))
}

func dropFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.yes, "yes", false, "drop the dead letters without asking")
}

func cancelFlags(fs *flag.FlagSet, c *cli) {
	fs.BoolVar(&c.yes, "yes", false, "cancel the messages without asking")
}

func listFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.state, "state", "all", "list the messages in `S`: ready, delayed, inflight, dead, or all")
	fs.IntVar(&c.n, "n", defaultDead, fmt.Sprintf("list at most `COUNT` messages of each state, from 1 to %d", delayqueue.MaxBatch))
	fs.Int64Var(&c.offset, "offset", 0, "skip the first `N` messages of each state")
}

// newQueue returns a Queue on key. Its Visibility and MaxAttempts play no
// part in the calls the commands and the page make: Len, Messages and
// DeadLetters read, Requeue and Drop act on dead letters only, and
// Cancel on ready and delayed messages.
func newQueue(client redis.UniversalClient, key string) (*delayqueue.Queue, error) {
	return delayqueue.New(client, delayqueue.Config{Key: key})
}

func (c *cli) queue(key string) (*delayqueue.Queue, error) { return newQueue(c.client, key) }

type queueStatsJSON struct {
	Key      string `json:"key"`
	Ready    int64  `json:"ready"`
	Delayed  int64  `json:"delayed"`
	InFlight int64  `json:"inflight"`
	Dead     int64  `json:"dead"`
}

// readQueueStats reads the messages of q in each state, at one instant,
// with Queue.Len: the commands, ls and the page show what it returns.
func readQueueStats(ctx context.Context, q *delayqueue.Queue) (queueStatsJSON, error) {
	out := queueStatsJSON{Key: q.Config().Key}
	var err error
	out.Ready, out.Delayed, out.InFlight, out.Dead, err = q.Len(ctx)
	return out, err
}

func (c *cli) queueStats(q *delayqueue.Queue, key string) (queueStatsJSON, error) {
	ctx, cancel := c.call()
	defer cancel()
	out, err := readQueueStats(ctx, q)
	return out, c.wrongType(err, queueKind, key)
}

// empty reports whether the queue holds no message: a delay queue keeps
// nothing in Redis then, so no command can tell it from a key where no
// queue ever was.
func (s queueStatsJSON) empty() bool {
	return s.Ready == 0 && s.Delayed == 0 && s.InFlight == 0 && s.Dead == 0
}

// runQueueStats prints the messages ready, delayed, in flight and dead,
// read at one instant by Queue.Len. A queue that holds no message is the
// answer no: "no delay queue at KEY" (with -json, after the zeros).
func runQueueStats(c *cli, args []string) error {
	key := args[0]
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	out, err := c.queueStats(q, key)
	if err != nil {
		return err
	}
	if c.json {
		if err := c.writeJSON(out); err != nil || !out.empty() {
			return err
		}
		return c.none(queueKind, key)
	}
	if out.empty() {
		return c.none(queueKind, key)
	}
	t := newTable(c.stdout, "QUEUE", key)
	t.row("ready", out.Ready)
	t.row("delayed", out.Delayed)
	t.row("in flight", out.InFlight)
	t.row("dead", out.Dead)
	t.flush()
	return nil
}

type deadJSON struct {
	ID       string    `json:"id"`
	Attempts int       `json:"attempts"`
	DeadAt   time.Time `json:"dead_at"`
	Payload  *string   `json:"payload"` // null when not UTF-8
	Base64   []byte    `json:"payload_base64"`
}

// deadLetters reads up to n dead letters, oldest first.
func (c *cli) deadLetters(q *delayqueue.Queue, n int) ([]delayqueue.Message, error) {
	ctx, cancel := c.call()
	defer cancel()
	dead, err := q.DeadLetters(ctx, n)
	return dead, c.wrongType(err, queueKind, q.Config().Key)
}

// runQueueDead lists up to -n dead letters, oldest first, with the
// deliveries each had, when it was dead-lettered, and its payload.
func runQueueDead(c *cli, args []string) error {
	key := args[0]
	if c.n < 1 || c.n > delayqueue.MaxBatch {
		return usageErrorf("-n %d: from 1 to %d", c.n, delayqueue.MaxBatch)
	}
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	stats, err := c.queueStats(q, key)
	if err != nil {
		return err
	}
	dead, err := c.deadLetters(q, c.n)
	if err != nil {
		return err
	}
	if stats.empty() && len(dead) == 0 {
		if c.json {
			if err := c.writeJSON([]deadJSON{}); err != nil {
				return err
			}
		}
		return c.none(queueKind, key)
	}
	if c.json {
		out := make([]deadJSON, 0, len(dead))
		for _, m := range dead {
			d := deadJSON{ID: m.ID, Attempts: m.Attempt, DeadAt: m.DueAt.UTC()}
			d.Payload, d.Base64 = payloadJSON(m.Payload)
			out = append(out, d)
		}
		return c.writeJSON(out)
	}
	fmt.Fprintf(c.stdout, "%s: %s, oldest first; %s in all\n", key, plural(len(dead), "dead letter"), plural(int(stats.Dead), "dead letter"))
	if len(dead) == 0 {
		return nil
	}
	fmt.Fprintln(c.stdout)
	t := newTable(c.stdout, "ID", "ATTEMPTS", "DEAD SINCE (SERVER CLOCK)", "BYTES", "PAYLOAD")
	for _, m := range dead {
		t.row(display(m.ID), m.Attempt, m.DueAt.UTC().Format(clockFormat), len(m.Payload), clip(text(m.Payload), 60))
	}
	t.flush()
	return nil
}

// text returns a payload as a table shows it, in its last column: as it
// is when it is printable UTF-8 (spaces included), else quoted as a Go
// string, so that no payload can break a table or send a terminal escape.
func text(p []byte) string {
	s := string(p)
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

type deadOpJSON struct {
	Key      string   `json:"key"`
	IDs      []string `json:"ids"`
	Count    int      `json:"count"` // requeued or dropped
	Declined bool     `json:"declined,omitempty"`
}

// requeueDead moves the dead letters among ids back to q, due now, with
// Queue.Requeue, and returns how many it moved: queue requeue and the
// page write through it. Its count includes the IDs that an earlier
// Requeue (such as this one's first run, sent again after its reply was
// lost) moved and that are not delivered yet.
func requeueDead(ctx context.Context, q *delayqueue.Queue, ids []string) (int, error) {
	return q.Requeue(ctx, ids...)
}

// runQueueRequeue moves the dead letters among the IDs back to the queue,
// due now, with requeueDead. None requeued is the answer no, and so is a
// key that holds no queue, to which it writes nothing (queueThere).
func runQueueRequeue(c *cli, args []string) error {
	key, ids := args[0], args[1:]
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	out := deadOpJSON{Key: key, IDs: ids}
	if err := c.queueThere(q, &out); err != nil {
		return err
	}
	ctx, cancel := c.call()
	defer cancel()
	n, err := requeueDead(ctx, q, ids)
	if err != nil {
		return c.wrongType(err, queueKind, key)
	}
	out.Count = n
	if c.json {
		err = c.writeJSON(out)
	} else {
		fmt.Fprintf(c.stdout, "requeued %d of %s on %s, due now%s\n", n, plural(len(ids), "ID"), key, notDead(n, len(ids)))
	}
	if err == nil && n == 0 {
		return errNo
	}
	return err
}

// notDead notes that IDs were left alone.
func notDead(n, of int) string {
	switch {
	case of-n == 1:
		return " (1 not a dead letter: left alone)"
	case n < of:
		return fmt.Sprintf(" (%d not dead letters: left alone)", of-n)
	}
	return ""
}

// runQueueDrop deletes the dead letters among the IDs for good, with
// Queue.Drop, after asking, unless -yes. A key that holds no queue is the
// answer no, before it asks (queueThere).
//
// A Drop that go-redis sent again, its reply lost, counts only the dead
// letters it finds still there, so it may count fewer than it deleted.
// When the dead letters are few enough to read whole (at most MaxBatch),
// runQueueDrop reads them before and, if Drop counts fewer than were
// there, after: an ID that was a dead letter before and is none after was
// dropped, by this call or, in the moment between, by another.
func runQueueDrop(c *cli, args []string) error {
	key, ids := args[0], args[1:]
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	out := deadOpJSON{Key: key, IDs: ids}
	if err := c.queueThere(q, &out); err != nil {
		return err
	}
	ctx, cancel := c.call()
	before, known, err := deadAmong(ctx, q, ids)
	cancel()
	if err != nil {
		return c.wrongType(err, queueKind, key)
	}
	if !c.yes {
		what := plural(len(ids), "ID")
		if known {
			what = fmt.Sprintf("%s (%d of %s given)", plural(len(before), "dead letter"), len(before), plural(len(ids), "ID"))
		}
		if !c.confirm(fmt.Sprintf("drop %s of queue %s for good?", what, key)) {
			return c.declined(&out, fmt.Sprintf("nothing dropped from %s", key))
		}
	}
	ctx, cancel = c.call()
	defer cancel()
	n, err := dropDead(ctx, q, ids, before, known)
	if err != nil {
		return c.wrongType(err, queueKind, key)
	}
	out.Count = n
	if c.json {
		err = c.writeJSON(out)
	} else {
		fmt.Fprintf(c.stdout, "dropped %d of %s on %s%s\n", n, plural(len(ids), "ID"), key, notDead(n, len(ids)))
	}
	if err == nil && n == 0 {
		return errNo
	}
	return err
}

// dropDead deletes the dead letters among ids for good, with Queue.Drop,
// and returns how many it dropped. before and known are what deadAmong
// read first: when Drop counts fewer than before holds, it reads again,
// and counts as dropped each of before that is a dead letter no more
// (see runQueueDrop).
func dropDead(ctx context.Context, q *delayqueue.Queue, ids, before []string, known bool) (int, error) {
	n, err := q.Drop(ctx, ids...)
	if err != nil || !known || n >= len(before) {
		return n, err
	}
	after, _, err := deadAmong(ctx, q, ids)
	if err != nil {
		return 0, err
	}
	gone := 0
	for _, id := range before {
		if !slices.Contains(after, id) {
			gone++
		}
	}
	return max(n, gone), nil
}

// deadAmong returns the IDs among ids that are dead letters of q, each
// once, and whether it could tell: it reads the dead letters whole only
// when there are at most MaxBatch of them.
func deadAmong(ctx context.Context, q *delayqueue.Queue, ids []string) ([]string, bool, error) {
	stats, err := readQueueStats(ctx, q)
	if err != nil {
		return nil, false, err
	}
	if stats.Dead > delayqueue.MaxBatch {
		return nil, false, nil
	}
	var found []string
	if stats.Dead > 0 {
		dead, err := q.DeadLetters(ctx, delayqueue.MaxBatch)
		if err != nil {
			return nil, false, err
		}
		for _, m := range dead {
			if slices.Contains(ids, m.ID) && !slices.Contains(found, m.ID) {
				found = append(found, m.ID)
			}
		}
	}
	return found, true, nil
}

// A queueState is a state as -state and -json name it.
type queueState struct {
	name  string
	state delayqueue.State
}

// queueStates are the states queue list takes for -state, in the order it
// lists them with -state all.
var queueStates = []queueState{
	{"ready", delayqueue.Ready}, {"delayed", delayqueue.Delayed}, {"inflight", delayqueue.InFlight}, {"dead", delayqueue.Dead},
}

type messageJSON struct {
	State    string     `json:"state"` // ready, delayed, inflight or dead
	ID       string     `json:"id"`
	Attempts int        `json:"attempts"`
	At       time.Time  `json:"at"`
	Deadline *time.Time `json:"lease_deadline"` // null but in flight
	Payload  *string    `json:"payload"`        // null when not UTF-8
	Base64   []byte     `json:"payload_base64"`
}

// runQueueList lists the queue's messages in the state -state, or in
// each state (-state all, the default): at most -n of each, after the
// first -offset, in the state's order (Queue.Messages). A queue that
// holds no message is the answer no.
func runQueueList(c *cli, args []string) error {
	key := args[0]
	if c.n < 1 || c.n > delayqueue.MaxBatch {
		return usageErrorf("-n %d: from 1 to %d", c.n, delayqueue.MaxBatch)
	}
	if c.offset < 0 || c.offset > math.MaxInt32 {
		return usageErrorf("-offset %d: from 0 to %d", c.offset, math.MaxInt32)
	}
	states := queueStates
	if c.state != "all" {
		i := slices.IndexFunc(queueStates, func(s queueState) bool { return s.name == strings.ReplaceAll(c.state, "-", "") })
		if i < 0 {
			return usageErrorf("-state %q: ready, delayed, inflight, dead or all", c.state)
		}
		states = queueStates[i : i+1]
	}
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	stats, err := c.queueStats(q, key)
	if err != nil {
		return err
	}
	out := []messageJSON{}
	for _, s := range states {
		ctx, cancel := c.call()
		msgs, err := q.Messages(ctx, s.state, int(c.offset), c.n)
		cancel()
		if err != nil {
			return c.wrongType(err, queueKind, key)
		}
		for _, m := range msgs {
			j := messageJSON{State: s.name, ID: m.ID, Attempts: m.Attempt, At: m.DueAt.UTC()}
			j.Payload, j.Base64 = payloadJSON(m.Payload)
			if !m.Deadline.IsZero() {
				d := m.Deadline.UTC()
				j.Deadline = &d
			}
			out = append(out, j)
		}
	}
	if c.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	} else if !stats.empty() || len(out) > 0 {
		c.printMessages(key, stats, out)
	}
	if stats.empty() && len(out) == 0 {
		return c.none(queueKind, key)
	}
	return nil
}

// printMessages prints the table of queue list.
func (c *cli) printMessages(key string, stats queueStatsJSON, msgs []messageJSON) {
	fmt.Fprintf(c.stdout, "%s: %d ready, %d delayed, %d in flight, %s\n", key, stats.Ready, stats.Delayed, stats.InFlight, plural(int(stats.Dead), "dead letter"))
	shown := plural(len(msgs), "message")
	if c.offset > 0 {
		shown += fmt.Sprintf(" after the first %d of each state", c.offset)
	}
	fmt.Fprintf(c.stdout, "%s listed: ready and delayed earliest due first, in flight by lease end, dead oldest first\n", shown)
	if len(msgs) == 0 {
		return
	}
	fmt.Fprintln(c.stdout)
	t := newTable(c.stdout, "STATE", "ID", "ATTEMPTS", "DUE, OR DEAD SINCE (SERVER CLOCK)", "LEASE ENDS (SERVER CLOCK)", "BYTES", "PAYLOAD")
	for _, m := range msgs {
		lease := "-"
		if m.Deadline != nil {
			lease = m.Deadline.Format(clockFormat)
		}
		state := m.State
		if state == "inflight" {
			state = "in flight"
		}
		t.row(state, display(m.ID), m.Attempts, m.At.Format(clockFormat), lease, len(m.Base64), clip(text(m.Base64), 60))
	}
	t.flush()
}

// payloadJSON returns a payload as -json gives it: as text, or nil when it
// is not UTF-8, and as bytes (base64 in JSON), never null.
func payloadJSON(p []byte) (*string, []byte) {
	if p == nil {
		p = []byte{}
	}
	if !utf8.Valid(p) {
		return nil, p
	}
	s := string(p)
	return &s, p
}

// cancelQueued deletes the ready and delayed messages among ids for good,
// with Queue.Cancel, and returns how many it deleted: queue cancel and
// the page write through it. A message in flight is left to its
// consumer, and a dead letter to a drop. A Cancel that go-redis sent
// again, its reply lost, counts what its first run deleted.
func cancelQueued(ctx context.Context, q *delayqueue.Queue, ids []string) (int, error) {
	return q.Cancel(ctx, ids...)
}

// runQueueCancel deletes the ready and delayed messages among the IDs
// with cancelQueued, after asking, unless -yes. None cancelled is the
// answer no, and so is a key that holds no queue, before it asks: a
// Cancel there would leave its record behind, and nothing else
// (queueThere).
func runQueueCancel(c *cli, args []string) error {
	key, ids := args[0], args[1:]
	q, err := c.queue(key)
	if err != nil {
		return err
	}
	out := deadOpJSON{Key: key, IDs: ids}
	if err := c.queueThere(q, &out); err != nil {
		return err
	}
	if !c.yes {
		if !c.confirm(fmt.Sprintf("cancel the ready and delayed messages among %s of queue %s, for good?", plural(len(ids), "ID"), key)) {
			return c.declined(&out, fmt.Sprintf("nothing cancelled on %s", key))
		}
	}
	ctx, cancel := c.call()
	defer cancel()
	n, err := cancelQueued(ctx, q, ids)
	if err != nil {
		return c.wrongType(err, queueKind, key)
	}
	out.Count = n
	if c.json {
		err = c.writeJSON(out)
	} else {
		note := ""
		switch left := len(ids) - n; {
		case left == 1:
			note = " (1 not ready or delayed: left alone)"
		case left > 1:
			note = fmt.Sprintf(" (%d not ready or delayed: left alone)", left)
		}
		fmt.Fprintf(c.stdout, "cancelled %d of %s on %s%s\n", n, plural(len(ids), "ID"), key, note)
	}
	if err == nil && n == 0 {
		return errNo
	}
	return err
}

// queueThere reads the queue's messages in each state before a write to
// it, and returns nil when it holds any. A key that holds no queue ends
// the write before anything is written or asked: out, its count 0, as
// JSON, and "no delay queue at KEY".
func (c *cli) queueThere(q *delayqueue.Queue, out *deadOpJSON) error {
	stats, err := c.queueStats(q, out.Key)
	if err != nil || !stats.empty() {
		return err
	}
	if c.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	}
	return c.none(queueKind, out.Key)
}

// declined ends a queue write that you declined: out, marked declined, as
// JSON, or line; the answer is no.
func (c *cli) declined(out *deadOpJSON, line string) error {
	out.Declined = true
	if c.json {
		if err := c.writeJSON(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(c.stdout, line)
	}
	return errNo
}
