package redpacket

import (
	"context"
	"embed"
	"errors"
	"strconv"
	"time"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
	"github.com/slotlimit/slotlimit/internal/script"
)

// Each operation that writes is one Lua script, in scripts/, whose header
// is its contract. Below, each script's Go side stands in one place: the
// script, the order of its keys, the building of its arguments and the
// one decoder of its reply. Every reply begins with a status, but
// grab.lua's, the hot path, which is a bare claim or a bare status; the
// replies grabs.lua gives each user, after its status, are as bare.
//
//go:embed scripts
var scriptFiles embed.FS

var createScript = script.Load(scriptFiles, "scripts/create.lua")

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
	reply, err := s.base.Runner.Run(ctx, createScript, keys, args...).Result()
	if err != nil {
		return false, err
	}
	return decodeCreate(reply)
}

// decodeCreate decodes create.lua's reply: {1, created, expires} when the
// packet is stored, {0} when another has its id.
func decodeCreate(v any) (created bool, err error) {
	r := kernel.ReadReply(v)
	switch r.Status() {
	case 1:
		r.Int(0)
		r.Int(1)
		r.Want(r.Len() == 2)
	default:
		r.Want(r.Status() == 0 && r.Len() == 0)
	}
	return r.Status() == 1, r.Err()
}

var grabScript = script.Load(scriptFiles, "scripts/grab.lua")

// The keys of grab.lua, in its order.
const (
	grabKeyPacket = iota
	grabKeyShares
	grabKeyLog
	grabKeys
)

// errRefused is the error runGrab returns with the refusal of a grab.
var errRefused = errors.New("refused")

// runGrab runs grab.lua for user on packet id on s. It returns the user's
// claim; or, with errRefused, the refusal.
func (s *Store) runGrab(ctx context.Context, id, user string) (Claim, error, error) {
	sh := s.cfg.shard(id)
	keys := make([]string, grabKeys)
	keys[grabKeyPacket], keys[grabKeyShares], keys[grabKeyLog] = sh.packet(id), sh.shares(id), sh.log()
	reply, err := s.base.Runner.Run(ctx, grabScript, keys, id, user).Result()
	if err != nil {
		return Claim{}, nil, err
	}
	return decodeGrab(id, user, reply)
}

// decodeGrab decodes grab.lua's bare reply: the user's claim, a string;
// or, with errRefused, the refusal, an integer: ErrNotFound (0),
// ErrSoldOut (-1) or ErrExpired (-2).
func decodeGrab(id, user string, reply any) (Claim, error, error) {
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

var grabsScript = script.Load(scriptFiles, "scripts/grabs.lua")

// The keys of grabs.lua are grab.lua's, in its order.

// A grabbed is the answer grab.lua or grabs.lua gives one user: a claim,
// or the refusal.
type grabbed struct {
	claim   Claim
	refusal error // ErrNotFound, ErrSoldOut or ErrExpired
}

// runGrabs runs grab.lua for the one user, or grabs.lua for two or more,
// on packet id on s, and returns each user's answer, in order.
func (s *Store) runGrabs(ctx context.Context, id string, users []string) ([]grabbed, error) {
	if len(users) == 1 {
		c, refusal, err := s.runGrab(ctx, id, users[0])
		if err != nil && refusal == nil {
			return nil, err
		}
		return []grabbed{{claim: c, refusal: refusal}}, nil
	}
	sh := s.cfg.shard(id)
	keys := make([]string, grabKeys)
	keys[grabKeyPacket], keys[grabKeyShares], keys[grabKeyLog] = sh.packet(id), sh.shares(id), sh.log()
	args := make([]any, 0, 1+len(users))
	args = append(args, id)
	for _, u := range users {
		args = append(args, u)
	}
	reply, err := s.base.Runner.Run(ctx, grabsScript, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	return decodeGrabs(id, users, reply)
}

// decodeGrabs decodes grabs.lua's reply: {1, replies...}, one reply per
// user, in order, each as grab.lua's (see decodeGrab).
func decodeGrabs(id string, users []string, reply any) ([]grabbed, error) {
	r := kernel.ReadReply(reply)
	replies := r.Fields()
	if r.Err() != nil || r.Status() != 1 || len(replies) != len(users) {
		return nil, callerr.UnexpectedReply(reply)
	}
	out := make([]grabbed, len(users))
	for i, r := range replies {
		c, refusal, err := decodeGrab(id, users[i], r)
		if err != nil && refusal == nil {
			return nil, callerr.UnexpectedReply(reply)
		}
		out[i] = grabbed{claim: c, refusal: refusal}
	}
	return out, nil
}

var expireScript = script.Load(scriptFiles, "scripts/expire.lua")

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
	reply, err := p.store.base.Runner.Run(ctx, expireScript, keys, id).Result()
	if err != nil {
		return false, 0, err
	}
	return decodeExpire(reply)
}

// decodeExpire decodes expire.lua's reply: {0, shares, amount, at} once
// the packet is expired, {1, ms} while it is not yet due, {2} when it is
// gone.
func decodeExpire(v any) (notYet bool, wait time.Duration, err error) {
	r := kernel.ReadReply(v)
	switch r.Status() {
	case 0:
		r.Int(0)
		r.Int(1)
		r.Int(2)
		r.Want(r.Len() == 3)
	case 1:
		wait = time.Duration(r.Int(0)) * time.Millisecond
		r.Want(r.Len() == 1)
	default:
		r.Want(r.Status() == 2 && r.Len() == 0)
	}
	return r.Status() == 1, wait, r.Err()
}

var ackScript = script.Load(scriptFiles, "scripts/ack.lua")

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
	noWait := script.Runner{Client: p.store.base.Client}
	return decodeDone(noWait.Run(ctx, ackScript, keys, args...).Result())
}

var syncScript = script.Load(scriptFiles, "scripts/sync.lua")

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
	return decodeDone(p.store.base.Runner.Run(ctx, syncScript, keys).Result())
}

// decodeDone decodes the reply of a script whose one reply is {1}.
func decodeDone(v any, err error) error {
	if err != nil {
		return err
	}
	r := kernel.ReadReply(v)
	r.Want(r.Status() == 1 && r.Len() == 0)
	return r.Err()
}
