package redpacket

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A Snapshot is a packet's state at one moment, read by Inspect: the
// packet as created, what is left of it, and the claims taken.
type Snapshot struct {
	// Packet is the packet as Create stored it: its ID, Total, Count,
	// Split and TTL.
	Packet Packet

	// CreatedAt is when it was stored, and ExpiresAt when its TTL
	// passes, from which Grab refuses: both on the server's clock.
	CreatedAt, ExpiresAt time.Time

	// ExpiredAt is when a Persister found the packet expired and logged
	// its unclaimed shares for refund, on the server's clock; zero until
	// then.
	ExpiredAt time.Time

	// SharesLeft are the shares not yet taken, and AmountLeft their sum,
	// as Remaining returns them.
	SharesLeft int
	AmountLeft int64

	// Claims are the shares taken, one per user, in the order they were
	// taken (by Seq): Count - SharesLeft of them.
	Claims []Claim
}

// Inspect returns the packet and its claims at one moment, for operators
// and tools. It returns ErrNotFound when there is no such packet, and an
// error matching ErrInvalidArgument, with nothing sent, for a packet id
// Grab would refuse or a nil ctx. It only reads, so it may be called again
// after any error.
func (s *Store) Inspect(ctx context.Context, packetID string) (Snapshot, error) {
	if err := errs.Check(ctx, s.usable(), "Inspect", name(packetID)); err != nil {
		return Snapshot{}, err
	}
	return s.snapshot(ctx, "Inspect", packetID)
}

// snapshot reads packet id for method, on a usable s with a non-nil ctx.
func (s *Store) snapshot(ctx context.Context, method, packetID string) (Snapshot, error) {
	if err := checkID("packet id", packetID); err != nil {
		return Snapshot{}, refused(method, packetID, err)
	}
	fields, err := s.base.Client.HGetAll(ctx, s.cfg.shard(packetID).packet(packetID)).Result()
	if err != nil {
		return Snapshot{}, s.fail(ctx, method, packetID, err)
	}
	if len(fields) == 0 {
		return Snapshot{}, refused(method, packetID, ErrNotFound)
	}
	snap, err := decodeSnapshot(packetID, fields)
	if err != nil {
		return Snapshot{}, s.fail(ctx, method, packetID, err)
	}
	return snap, nil
}

// errBadPacket is the error for a packet's hash that the scripts did not
// write.
var errBadPacket = errors.New("the packet's hash lacks a number the scripts write (total, count, split, created, expires, left, left_amount, expired)")

// decodeSnapshot decodes a packet's hash, as the scripts write it (see
// scripts/lib.lua).
func decodeSnapshot(packetID string, fields map[string]string) (Snapshot, error) {
	var bad bool
	num := func(name string) int64 {
		n, err := strconv.ParseInt(fields[name], 10, 64)
		bad = bad || err != nil
		return n
	}
	snap := Snapshot{Packet: Packet{ID: packetID}}
	snap.Packet.Total = num("total")
	snap.Packet.Count = int(num("count"))
	snap.Packet.Split = Split(num("split"))
	created, expires := num("created"), num("expires")
	snap.SharesLeft = int(num("left"))
	snap.AmountLeft = num("left_amount")
	if bad {
		return Snapshot{}, errBadPacket
	}
	snap.Packet.TTL = time.Duration(expires-created) * time.Millisecond
	snap.CreatedAt, snap.ExpiresAt = time.UnixMilli(created), time.UnixMilli(expires)
	if v, ok := fields["expired"]; ok {
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Snapshot{}, errBadPacket
		}
		snap.ExpiredAt = time.UnixMilli(at)
	}
	snap.Claims = []Claim{}
	for f, v := range fields {
		user, ok := strings.CutPrefix(f, "u:")
		if !ok {
			continue
		}
		c, ok := parseClaim(packetID, user, v)
		if !ok {
			return Snapshot{}, errBadClaim(f, v)
		}
		snap.Claims = append(snap.Claims, c)
	}
	sort.Slice(snap.Claims, func(i, j int) bool { return snap.Claims[i].Seq < snap.Claims[j].Seq })
	return snap, nil
}
