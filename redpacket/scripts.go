package redpacket

import (
	"context"
	_ "embed"
	"errors"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation that writes is one Lua script, run by a script.Runner:
// EVALSHA, and EVAL when the server answers NOSCRIPT. This file is the Go
// side of each script's contract: the order of its keys, the building of
// its arguments and the one decoder of its reply; the Lua side is the
// header of each file in scripts/. Every reply begins with a status, but
// grab.lua's, the hot path, which is a bare claim or a bare status.
var (
	//go:embed scripts/lib.lua
	libLua string
	lib    = script.Lib{Include: "-- #include lib.lua\n", Source: libLua}

	//go:embed scripts/create.lua
	createLua    string
	createScript = script.New(createLua, lib)

	//go:embed scripts/grab.lua
	grabLua    string
	grabScript = script.New(grabLua)

	//go:embed scripts/expire.lua
	expireLua    string
	expireScript = script.New(expireLua, lib)

	//go:embed scripts/ack.lua
	ackLua    string
	ackScript = script.New(ackLua)

	//go:embed scripts/sync.lua
	syncLua    string
	syncScript = script.New(syncLua)
)

// The keys of create.lua, in its order.
const (
	createKeyPacket = iota
	createKeyShares
	createKeyLog
	createKeyDue
	createKeys
)

// runCreate runs create.lua for a valid p on s: it reports false when
// another packet has p.ID.
func (s *Store) runCreate(ctx context.Context, p Packet) (bool, error) {
	sh := s.cfg.shard(p.ID)
	keys := make([]string, createKeys)
	keys[createKeyPacket], keys[createKeyShares] = sh.packet(p.ID), sh.shares(p.ID)
	keys[createKeyLog], keys[createKeyDue] = sh.log(), sh.due()
	args := make([]any, 0, 6+p.Count)
	args = append(args, p.ID, itoa(p.Total), strconv.Itoa(p.Count), strconv.Itoa(int(p.Split)),
		ms(p.ttl()), s.linger)
	for _, a := range p.shares() {
		args = append(args, itoa(a))
	}
	reply, err := s.runner.Run(ctx, createScript, keys, args...).Int64Slice()
	if err != nil {
		return false, err
	}
	switch {
	case len(reply) == 3 && reply[0] == 1:
		return true, nil
	case len(reply) == 1 && reply[0] == 0:
		return false, nil
	}
	return false, callerr.UnexpectedReply(reply)
}

// The keys of grab.lua, in its order.
const (
	grabKeyPacket = iota
	grabKeyShares
	grabKeyLog
	grabKeys
)

// errRefused is the error runGrab returns with the refusal of a grab.
var errRefused = errors.New("refused")

// runGrab runs grab.lua for user on packet id on s. It returns the
// user's claim, which the script replies as a bare string; or, with
// errRefused, the refusal, a bare integer: ErrNotFound (0), ErrSoldOut
// (-1) or ErrExpired (-2).
func (s *Store) runGrab(ctx context.Context, id, user string) (Claim, error, error) {
	sh := s.cfg.shard(id)
	keys := make([]string, grabKeys)
	keys[grabKeyPacket], keys[grabKeyShares], keys[grabKeyLog] = sh.packet(id), sh.shares(id), sh.log()
	reply, err := s.runner.Run(ctx, grabScript, keys, id, user).Result()
	if err != nil {
		return Claim{}, nil, err
	}
	switch reply {
	case int64(0):
		return Claim{}, ErrNotFound, errRefused
	case int64(-1):
		return Claim{}, ErrSoldOut, errRefused
	case int64(-2):
		return Claim{}, ErrExpired, errRefused
	}
	if claim, ok := reply.(string); ok {
		if c, ok := parseClaim(id, user, claim); ok {
			return c, nil, nil
		}
	}
	return Claim{}, nil, callerr.UnexpectedReply(reply)
}

// The keys of expire.lua, in its order.
const (
	expireKeyPacket = iota
	expireKeyLog
	expireKeyDue
	expireKeys
)

// runExpire runs expire.lua for packet id of shard sh. It reports, when
// the packet is not due yet, how long until it is; otherwise the packet
// is expired, now or before, or gone, and off the due set.
func (p *Persister) runExpire(ctx context.Context, sh shard, id string) (notYet bool, wait time.Duration, err error) {
	keys := make([]string, expireKeys)
	keys[expireKeyPacket], keys[expireKeyLog], keys[expireKeyDue] = sh.packet(id), sh.log(), sh.due()
	reply, err := p.store.runner.Run(ctx, expireScript, keys, id).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	switch {
	case len(reply) == 4 && reply[0] == 0, len(reply) == 1 && reply[0] == 2:
		return false, 0, nil
	case len(reply) == 2 && reply[0] == 1:
		return true, time.Duration(reply[1]) * time.Millisecond, nil
	}
	return false, 0, callerr.UnexpectedReply(reply)
}

// The keys of ack.lua, in its order.
const (
	ackKeyLog = iota
	ackKeys
)

// runAck runs ack.lua: the entries ids of sh's log are acked in the
// persister's group and deleted. It sends no WAIT: an ack a failover
// loses only has the entries written again.
func (p *Persister) runAck(ctx context.Context, sh shard, ids []string) error {
	keys := make([]string, ackKeys)
	keys[ackKeyLog] = sh.log()
	args := make([]any, 0, 1+len(ids))
	args = append(args, p.cfg.Group)
	for _, id := range ids {
		args = append(args, id)
	}
	noWait := script.Runner{Client: p.store.client}
	return status(noWait.Run(ctx, ackScript, keys, args...).Int64())
}

// The keys of sync.lua, in its order.
const (
	syncKeyMarker = iota
	syncKeys
)

// runSync runs sync.lua on sh through the Store's runner, which waits for
// Config.Replicas to have it.
func (p *Persister) runSync(ctx context.Context, sh shard) error {
	keys := make([]string, syncKeys)
	keys[syncKeyMarker] = sh.sync()
	return status(p.store.runner.Run(ctx, syncScript, keys).Int64())
}

// status decodes the reply of a script whose one reply is the status 1.
func status(reply int64, err error) error {
	if err == nil && reply != 1 {
		return callerr.UnexpectedReply(reply)
	}
	return err
}
