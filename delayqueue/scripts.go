package delayqueue

import (
	_ "embed"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each atomic operation is one Lua script, run with EVALSHA, and EVAL when
// the server answers NOSCRIPT. Every script takes the queue's keys,
// q.keys, in the order of the key constants (see keys.go), and includes
// lib.lua, and wake.lua and give.lua where it needs them. Every reply is
// a table whose first element is a status (see lib.lua), read here by the
// one decoder of each script:
//
//	script      ARGV (built by)                    reply, decoder
//	push        pushArgs                           {1, queued}: decodeCount
//	poll        pollOnce                           {1, message} or {2, wait ms}: decodePoll
//	leave       leave                              {1, was a waiter}: unread
//	ack         settle, deadlineArg                {1} or {0}: decodeSettle
//	nack        settle, deadlineArg, delay, ...    {1} or {0}: decodeSettle
//	extend      settle, visibility                 {1, deadline} or {0}: decodeSettle
//	len         none                               {1, ready, delayed, in flight, dead}: decodeLen
//	dead        n                                  {1, message fields...}: decodeDead
//	requeue     notify, ids                        {1, requeued}: decodeCount
//	drop        ids                                {1, dropped}: decodeCount
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/wake.lua
	wakeLua string
	wake    = script.Lib{Include: "-- #include wake.lua\n", Source: wakeLua}

	//go:embed scripts/give.lua
	giveLua string
	give    = script.Lib{Include: "-- #include give.lua\n", Source: giveLua}

	//go:embed scripts/push.lua
	pushLua    string
	pushScript = script.New(pushLua, lib, wake)

	//go:embed scripts/poll.lua
	pollLua    string
	pollScript = script.New(pollLua, lib, wake, give)

	//go:embed scripts/leave.lua
	leaveLua    string
	leaveScript = script.New(leaveLua, lib, wake, give)

	//go:embed scripts/ack.lua
	ackLua    string
	ackScript = script.New(ackLua, lib)

	//go:embed scripts/nack.lua
	nackLua    string
	nackScript = script.New(nackLua, lib, wake, give)

	//go:embed scripts/extend.lua
	extendLua    string
	extendScript = script.New(extendLua, lib)

	//go:embed scripts/len.lua
	lenLua    string
	lenScript = script.New(lenLua, lib)

	//go:embed scripts/dead.lua
	deadLua    string
	deadScript = script.New(deadLua, lib)

	//go:embed scripts/requeue.lua
	requeueLua    string
	requeueScript = script.New(requeueLua, lib, wake, give)

	//go:embed scripts/drop.lua
	dropLua    string
	dropScript = script.New(dropLua, lib, give)
)

// The statuses that begin a reply.
const (
	statusNotHeld = 0 // the delivery no longer holds its lease
	statusDone    = 1 // done as asked
	statusWait    = 2 // nothing due: the reply's second element is how long to sleep
)

// decodeReply splits a reply into its status and the rest.
func decodeReply(reply any) (int64, []any, error) {
	r, ok := reply.([]any)
	if !ok || len(r) == 0 {
		return 0, nil, callerr.UnexpectedReply(reply)
	}
	status, ok := r[0].(int64)
	if !ok {
		return 0, nil, callerr.UnexpectedReply(reply)
	}
	return status, r[1:], nil
}

// decodeCount reads {1, n} with n from 0 to most.
func decodeCount(reply any, most int) (int, error) {
	status, r, err := decodeReply(reply)
	if err != nil {
		return 0, err
	}
	if status == statusDone && len(r) == 1 {
		if n, ok := r[0].(int64); ok && n >= 0 && n <= int64(most) {
			return int(n), nil
		}
	}
	return 0, callerr.UnexpectedReply(reply)
}

// decodePoll reads poll.lua's reply: a message, or how long to wait.
func decodePoll(reply any) (Message, time.Duration, error) {
	status, r, err := decodeReply(reply)
	if err != nil {
		return Message{}, 0, err
	}
	switch {
	case status == statusWait && len(r) == 1:
		if wait, ok := r[0].(int64); ok {
			return Message{}, time.Duration(wait) * time.Millisecond, nil
		}
	case status == statusDone && len(r) == 5:
		m, err := decodeMessage(r)
		return m, 0, err
	}
	return Message{}, 0, callerr.UnexpectedReply(reply)
}

// decodeSettle reads the reply of ack.lua, nack.lua or extend.lua:
// whether the delivery held its lease, and extend's new deadline (ms).
func decodeSettle(reply any) (held bool, deadline int64, err error) {
	status, r, err := decodeReply(reply)
	if err != nil {
		return false, 0, err
	}
	switch {
	case status == statusNotHeld && len(r) == 0:
		return false, 0, nil
	case status == statusDone && len(r) == 0:
		return true, 0, nil
	case status == statusDone && len(r) == 1:
		if deadline, ok := r[0].(int64); ok {
			return true, deadline, nil
		}
	}
	return false, 0, callerr.UnexpectedReply(reply)
}

// decodeLen reads len.lua's reply: ready, delayed, in flight, dead.
func decodeLen(reply any) (counts [4]int64, err error) {
	status, r, err := decodeReply(reply)
	if err != nil {
		return counts, err
	}
	if status != statusDone || len(r) != len(counts) {
		return counts, callerr.UnexpectedReply(reply)
	}
	for i := range counts {
		var ok bool
		if counts[i], ok = r[i].(int64); !ok {
			return counts, callerr.UnexpectedReply(reply)
		}
	}
	return counts, nil
}

// decodeDead reads dead.lua's reply: dead letters, oldest first.
func decodeDead(reply any) ([]Message, error) {
	status, r, err := decodeReply(reply)
	if err != nil {
		return nil, err
	}
	if status != statusDone || len(r)%4 != 0 {
		return nil, callerr.UnexpectedReply(reply)
	}
	dead := make([]Message, 0, len(r)/4)
	for i := 0; i < len(r); i += 4 {
		m, err := decodeMessage(append(r[i:i+4:i+4], int64(0)))
		if err != nil {
			return nil, err
		}
		dead = append(dead, m)
	}
	return dead, nil
}
