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

type listedMessage struct {
	State    string     `json:"state"`
	ID       string     `json:"id"`
	Attempts int        `json:"attempts"`
	At       time.Time  `json:"at"`
	Deadline *time.Time `json:"lease_deadline"`
	Payload  *string    `json:"payload"`
	Base64   []byte     `json:"payload_base64"`
}

// queueList runs queue list -json with args and decodes what it prints.
func queueList(t *testing.T, url string, code int, args ...string) []listedMessage {
	t.Helper()
	r := cli(t, "", nil, append([]string{"-u", url, "queue", "list", "-json"}, args...)...)
	require.Equal(t, code, r.code, r.stderr)
	var out []listedMessage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	return out
}

// payloadsOf are the listed messages' states and payloads.
func payloadsOf(msgs []listedMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.State + " " + *m.Payload
	}
	return out
}

// queue list lists the messages of each state, in its order, with their
// deliveries, times, lease deadline and payloads; -state, -n and -offset
// choose which; a key with no queue is the answer no.
func TestQueueList(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newQueueScene(t, b)
		all := queueList(t, url, 0, s.key)
		assert.Equal(t, []string{"ready ready-1", "ready ready-2", "delayed later", "inflight in flight", "dead dead-1", "dead dead-2"}, payloadsOf(all))
		for _, m := range all {
			assert.NotEmpty(t, m.ID)
			assert.Equal(t, *m.Payload, string(m.Base64))
			assert.Equal(t, m.State == "inflight", m.Deadline != nil, "only a message in flight has a lease: %s", m.State)
			assert.WithinDuration(t, b.Now(), m.At, 2*time.Hour, "on the server's clock")
		}
		assert.Equal(t, s.dead[0], all[4].ID)
		assert.Equal(t, 1, all[3].Attempts, "delivered once")
		assert.Equal(t, 1, all[4].Attempts)
		assert.Equal(t, 0, all[0].Attempts)
		assert.True(t, all[2].At.After(all[1].At.Add(59*time.Minute)), "due in an hour")
		assert.True(t, all[3].Deadline.After(all[3].At.Add(59*time.Minute)), "an hour's lease")

		assert.Equal(t, []string{"ready ready-2"}, payloadsOf(queueList(t, url, 0, "-state", "ready", "-offset", "1", s.key)))
		assert.Equal(t, []string{"dead dead-1"}, payloadsOf(queueList(t, url, 0, "-state", "dead", "-n", "1", s.key)))
		assert.Equal(t, []string{"inflight in flight"}, payloadsOf(queueList(t, url, 0, "-state", "in-flight", s.key)))
		assert.Empty(t, queueList(t, url, 0, "-state", "delayed", "-offset", "1", s.key), "a queue with messages, none on the page")

		r := cli(t, "", nil, "-u", url, "queue", "list", s.key)
		require.Equal(t, 0, r.code)
		assert.Contains(t, r.stdout, s.key+": 2 ready, 1 delayed, 1 in flight, 2 dead letters\n")
		assert.Regexp(t, `(?m)^STATE +ID +ATTEMPTS +DUE, OR DEAD SINCE \(SERVER CLOCK\) +LEASE ENDS \(SERVER CLOCK\) +BYTES +PAYLOAD$`, r.stdout)
		assert.Regexp(t, `(?m)^in flight +`+all[3].ID+` +1 +\d{4}-.* UTC +\d{4}-.* UTC +9 +in flight$`, r.stdout)
		assert.Regexp(t, `(?m)^ready +`+all[0].ID+` +0 +\d{4}-.* UTC +- +7 +ready-1$`, r.stdout)

		assert.Empty(t, queueList(t, url, 1, s.key+":nosuch"))
		r = cli(t, "", nil, "-u", url, "queue", "list", s.key+":nosuch")
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, "no delay queue at "+s.key+":nosuch\n", r.stderr)
		r = cli(t, "", nil, "-u", url, "queue", "dead", s.key+":nosuch")
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "no delay queue at "+s.key+":nosuch\n", r.stderr)

		for _, bad := range [][]string{{"-state", "waiting"}, {"-n", "0"}, {"-n", "1001"}, {"-offset", "-1"}} {
			r := cli(t, "", nil, append([]string{"-u", url, "queue", "list", s.key}, bad...)...)
			assert.Equal(t, 2, r.code, "%q", bad)
		}
	})
}

// queue cancel deletes the ready and delayed messages among the IDs,
// after asking; a message in flight and a dead letter are left alone, and
// none cancelled is the answer no.
func TestQueueCancel(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		s := newQueueScene(t, b)
		all := queueList(t, url, 0, s.key)
		ready, later, inflight := all[0].ID, all[2].ID, all[3].ID

		r := cli(t, "n\n", nil, "-u", url, "queue", "cancel", s.key, ready)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "cancel the ready and delayed messages among 1 ID of queue "+s.key+", for good? [y/N] ", r.stderr)
		assert.Equal(t, "nothing cancelled on "+s.key+"\n", r.stdout)

		r = cli(t, "y\n", nil, "-u", url, "queue", "cancel", s.key, ready, later, inflight, s.dead[0])
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "cancelled 2 of 4 IDs on "+s.key+" (2 not ready or delayed: left alone)\n", r.stdout)
		assert.Equal(t, map[string]int64{"ready": 1, "delayed": 0, "inflight": 1, "dead": 2},
			jsonInts(t, cli(t, "", nil, "-u", url, "queue", "stats", "-json", s.key).stdout, "ready", "delayed", "inflight", "dead"))

		r = cli(t, "", nil, "-u", url, "queue", "cancel", "-yes", "-json", s.key, inflight)
		assert.Equal(t, 1, r.code, "in flight: left alone")
		assert.Empty(t, r.stderr, "-yes does not ask")
		assert.Equal(t, int64(0), jsonInts(t, r.stdout, "count")["count"])
	})
}

// A cancel whose reply was lost, and which the command's client sent
// again, reports what its first run cancelled.
func TestResentCancelReportsCancelled(t *testing.T) {
	url, _ := server(t)
	s := newQueueScene(t, redistest.Redis(t))
	ctx := context.Background()
	_, err := s.q.Cancel(ctx, "absent") // loads the cancel script
	require.NoError(t, err)
	msgs, err := s.q.Messages(ctx, delayqueue.Ready, 0, 1)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	proxy, cuts := cutProxy(t, url, "evalsha", msgs[0].ID)
	r := cli(t, "", nil, "-u", proxy, "queue", "cancel", "-yes", s.key, msgs[0].ID)
	assert.Equal(t, int32(1), cuts.Load(), "the reply was lost")
	assert.Equal(t, 0, r.code, "cancelled, as the first run answered")
	assert.Equal(t, "cancelled 1 of 1 ID on "+s.key+"\n", r.stdout)
	ready, _, _, _, err := s.q.Len(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), ready)
}

// A key beside a queue that holds a value of another type is explained in
// words, with exit code 1, by each queue command.
func TestQueueWrongType(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		key := testKey(t, "cli-test:q:")
		side := "{" + key + "}/delayqueue:dead"
		require.NoError(t, b.Client.Set(ctx, side, "mine", time.Minute).Err())
		t.Cleanup(func() { b.Client.Del(context.Background(), side) })
		for _, args := range [][]string{
			{"queue", "stats", key}, {"queue", "list", key}, {"queue", "dead", key},
			{"queue", "cancel", "-yes", key, "x"}, {"queue", "requeue", key, "x"}, {"queue", "drop", "-yes", key, "x"},
		} {
			r := cli(t, "", nil, append([]string{"-u", url}, args...)...)
			assert.Equal(t, 1, r.code, "%q: %s", args, r.stderr)
			assert.Contains(t, r.stderr, key+": a key beside it holds a value of another type than a delay queue keeps there", "%q", args)
		}
		assert.Equal(t, "mine", b.Client.Get(ctx, side).Val())
	})
}
