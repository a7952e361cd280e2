package main_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/internal/redistest"
)

// A queueScene is a delay queue as the tests find it: two dead letters
// (dead-1, dead-2, by payload), one message in flight, two ready and one
// delayed by an hour.
type queueScene struct {
	key  string
	q    *delayqueue.Queue
	dead []string // the dead letters' IDs, oldest first
}

func newQueueScene(t *testing.T, b *redistest.Backend) *queueScene {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &queueScene{key: testKey(t, "cli-test:q:")}
	var err error
	s.q, err = delayqueue.New(b.Client, delayqueue.Config{Key: s.key, Visibility: time.Hour})
	require.NoError(t, err)
	once, err := delayqueue.New(b.Client, delayqueue.Config{Key: s.key, Visibility: time.Hour, MaxAttempts: 1})
	require.NoError(t, err)
	for _, p := range []string{"dead-1", "dead-2"} {
		id, err := once.Push(ctx, []byte(p), 0)
		require.NoError(t, err)
		m, err := once.Poll(ctx)
		require.NoError(t, err)
		require.Equal(t, id, m.ID)
		require.NoError(t, once.Nack(ctx, m, 0), "its last attempt: dead-lettered")
		s.dead = append(s.dead, id)
		b.Advance(2 * time.Millisecond) // so that they die at different times
	}
	_, err = s.q.Push(ctx, []byte("in flight"), 0)
	require.NoError(t, err)
	_, err = s.q.Poll(ctx)
	require.NoError(t, err)
	_, err = s.q.PushBatch(ctx, []delayqueue.Job{{Payload: []byte("ready-1")}, {Payload: []byte("ready-2")}, {Payload: []byte("later"), Delay: time.Hour}})
	require.NoError(t, err)
	return s
}

// queue stats prints the messages ready, delayed, in flight and dead;
// with -json, as integers.
func TestQueueStats(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newQueueScene(t, b)
		r := cli(t, "", nil, "-u", url, "queue", "stats", "-json", s.key)
		require.Equal(t, 0, r.code)
		got := jsonInts(t, r.stdout, "ready", "delayed", "inflight", "dead")
		assert.Equal(t, map[string]int64{"ready": 2, "delayed": 1, "inflight": 1, "dead": 2}, got)

		r = cli(t, "", nil, "-u", url, "queue", "stats", s.key)
		require.Equal(t, 0, r.code)
		assert.Regexp(t, `(?m)^QUEUE +`+s.key+`$`, r.stdout)
		assert.Regexp(t, `(?m)^ready +2$`, r.stdout)
		assert.Regexp(t, `(?m)^delayed +1$`, r.stdout)
		assert.Regexp(t, `(?m)^in flight +1$`, r.stdout)
		assert.Regexp(t, `(?m)^dead +2$`, r.stdout)

		// A key with no queue: the answer no, after the zeros with -json.
		r = cli(t, "", nil, "-u", url, "queue", "stats", "-json", s.key+":empty")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, map[string]int64{"ready": 0, "delayed": 0, "inflight": 0, "dead": 0},
			jsonInts(t, r.stdout, "ready", "delayed", "inflight", "dead"))
		assert.Equal(t, "no delay queue at "+s.key+":empty\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "queue", "stats", s.key+":empty")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "no delay queue at "+s.key+":empty\n", r.stderr)
	})
}

// queue dead lists the dead letters, oldest first, with their attempts,
// when they died and their payloads; requeue moves them back, due now;
// drop deletes them for good, after asking. An ID that is no dead letter
// is the answer no.
func TestQueueDeadRequeueDrop(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newQueueScene(t, b)
		r := cli(t, "", nil, "-u", url, "queue", "dead", "-json", s.key)
		require.Equal(t, 0, r.code)
		var dead []struct {
			ID       string    `json:"id"`
			Attempts int       `json:"attempts"`
			DeadAt   time.Time `json:"dead_at"`
			Payload  *string   `json:"payload"`
			Base64   []byte    `json:"payload_base64"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &dead))
		require.Len(t, dead, 2)
		for i, d := range dead {
			assert.Equal(t, s.dead[i], d.ID, "oldest first")
			assert.Equal(t, 1, d.Attempts)
			require.NotNil(t, d.Payload)
			assert.Equal(t, []string{"dead-1", "dead-2"}[i], *d.Payload)
			assert.Equal(t, *d.Payload, string(d.Base64))
			assert.WithinDuration(t, b.Now(), d.DeadAt, time.Minute, "on the server's clock")
		}
		r = cli(t, "", nil, "-u", url, "queue", "dead", "-n", "1", s.key)
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, s.key+": 1 dead letter, oldest first; 2 dead letters in all\n")
		assert.Regexp(t, `(?m)^ID +ATTEMPTS +DEAD SINCE \(SERVER CLOCK\) +BYTES +PAYLOAD$`, r.stdout)
		assert.Regexp(t, `(?m)^`+s.dead[0]+` +1 +\d{4}-.* UTC +6 +dead-1$`, r.stdout)
		assert.NotContains(t, r.stdout, s.dead[1])

		// requeue: dead-1 is due now.
		r = cli(t, "", nil, "-u", url, "queue", "requeue", s.key, s.dead[0], "nosuch")
		require.Equal(t, 0, r.code)
		assert.Equal(t, "requeued 1 of 2 IDs on "+s.key+", due now (1 not a dead letter: left alone)\n", r.stdout)
		r = cli(t, "", nil, "-u", url, "queue", "requeue", "-json", s.key, "nosuch")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, int64(0), jsonInts(t, r.stdout, "count")["count"])
		assert.Equal(t, map[string]int64{"ready": 3, "dead": 1}, jsonInts(t, cli(t, "", nil, "-u", url, "queue", "stats", "-json", s.key).stdout, "ready", "dead"))

		// drop: asked, and answered no; then yes.
		r = cli(t, "n\n", nil, "-u", url, "queue", "drop", s.key, s.dead[1])
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "drop 1 dead letter (1 of 1 ID given) of queue "+s.key+" for good? [y/N] ", r.stderr)
		assert.Equal(t, "nothing dropped from "+s.key+"\n", r.stdout)
		r = cli(t, "y\n", nil, "-u", url, "queue", "drop", s.key, s.dead[1])
		require.Equal(t, 0, r.code)
		assert.Equal(t, "dropped 1 of 1 ID on "+s.key+"\n", r.stdout)
		r = cli(t, "", nil, "-u", url, "queue", "drop", "-yes", "-json", s.key, s.dead[1])
		assert.Equal(t, 1, r.code, "no dead letter now")
		assert.Empty(t, r.stderr, "-yes does not ask")
		assert.Equal(t, int64(0), jsonInts(t, r.stdout, "count")["count"])
		assert.Equal(t, map[string]int64{"ready": 3, "dead": 0}, jsonInts(t, cli(t, "", nil, "-u", url, "queue", "stats", "-json", s.key).stdout, "ready", "dead"))

		r = cli(t, "", nil, "-u", url, "queue", "dead", "-json", s.key)
		require.Equal(t, 0, r.code)
		assert.Equal(t, "[]\n", r.stdout)
	})
}

// A drop whose reply was lost, and which the command's client sent again,
// deletes the dead letter once and reports it dropped, though the second
// run found nothing to count.
func TestResentDropReportsDropped(t *testing.T) {
	url, _ := server(t)
	s := newQueueScene(t, redistest.Redis(t))
	_, err := s.q.Drop(context.Background(), "absent") // loads the drop script
	require.NoError(t, err)
	proxy, cuts := cutProxy(t, url, "evalsha", s.dead[0])
	r := cli(t, "", nil, "-u", proxy, "queue", "drop", "-yes", s.key, s.dead[0])
	assert.Equal(t, int32(1), cuts.Load(), "the reply was lost")
	assert.Equal(t, 0, r.code, "dropped, as the first run answered")
	assert.Equal(t, "dropped 1 of 1 ID on "+s.key+"\n", r.stdout)
	dead, err := s.q.DeadLetters(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, s.dead[1], dead[0].ID)
}

// A payload that is not UTF-8 is null in "payload" and whole in
// "payload_base64"; a table shows it quoted, so that it sends no terminal
// codes.
func TestQueueDeadBinaryPayload(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:q:")
		q, err := delayqueue.New(b.Client, delayqueue.Config{Key: key, MaxAttempts: 1})
		require.NoError(t, err)
		payload := []byte("\xff\x00\x1b[2J")
		_, err = q.Push(ctx, payload, 0)
		require.NoError(t, err)
		m, err := q.Poll(ctx)
		require.NoError(t, err)
		require.NoError(t, q.Nack(ctx, m, 0))

		r := cli(t, "", nil, "-u", url, "queue", "dead", "-json", key)
		require.Equal(t, 0, r.code)
		var dead []struct {
			Payload *string `json:"payload"`
			Base64  []byte  `json:"payload_base64"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &dead))
		require.Len(t, dead, 1)
		assert.Nil(t, dead[0].Payload)
		assert.Equal(t, payload, dead[0].Base64)

		r = cli(t, "", nil, "-u", url, "queue", "dead", key)
		require.Equal(t, 0, r.code)
		assert.NotContains(t, r.stdout, "\x1b")
		assert.Contains(t, r.stdout, `"\xff\x00\x1b[2J"`)
	})
}
