package redpacket

import (
	"context"
	"errors"
	"fmt"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// errs is the package's error set: its sentinels, and the errors of its
// calls, each naming the package, the method and the key.
var errs = kernel.NewErrors("redpacket")

var (
	// ErrSoldOut is returned by Grab when every share of the packet has
	// been taken by other users.
	ErrSoldOut = errors.New("redpacket: sold out")

	// ErrNotFound is returned by Grab and Remaining when no packet has the
	// id: it was never created, or its keys lapsed (Config.Linger after
	// its TTL).
	ErrNotFound = errors.New("redpacket: packet not found")

	// ErrInvalidPacket is returned by Create, with nothing sent, for a
	// Packet that cannot be stored: see Packet for the rules. It matches
	// ErrInvalidArgument.
	ErrInvalidPacket = errs.Kind("invalid packet")

	// ErrExpired is returned by Grab, to a user who holds no claim, once
	// the packet's TTL has passed on the server's clock with shares left.
	ErrExpired = errors.New("redpacket: packet expired")

	// ErrExists is returned by Create, with nothing written, when a packet
	// with the id exists already.
	ErrExists = errors.New("redpacket: packet exists")

	// ErrOutcomeUnknown matches the error of a call that was sent to Redis
	// and got no answer: the connection broke or timed out, or the
	// context ended mid-call. The call may or may not have taken effect;
	// call again with the same arguments, which is safe since every write
	// takes effect once, however often it is sent. It is one value,
	// shared by every package of the module (slotlimit.ErrOutcomeUnknown).
	// A Redis error reply and an error returned before anything was sent
	// do not match it.
	ErrOutcomeUnknown = kernel.ErrOutcomeUnknown

	// ErrInvalidArgument is returned, with nothing sent, for a packet id
	// or user that is empty, longer than MaxIDLen bytes, not UTF-8, or
	// holds a NUL; by every method given a nil ctx; and by CreateSchema
	// for a nil database.
	ErrInvalidArgument = errs.InvalidArgument

	// ErrNotReplicated is wrapped by the error of a write that fewer than
	// Config.Replicas replicas acknowledged within ReplicaTimeout. The
	// write was made on the master, and may yet reach them, or be lost in
	// a failover.
	ErrNotReplicated = errs.NotReplicated

	// ErrInvalidConfig is returned, with nothing sent, by New and
	// NewPersister for a nil client or a configuration that cannot work,
	// and by every method of a zero or nil Store or Persister, one that
	// New or NewPersister did not make.
	ErrInvalidConfig = errs.InvalidConfig
)

// keyless returns err as the error of method, given by its Go name, which
// names no key: `redpacket: create schema: ...`.
func keyless(method string, err error) error {
	return callerr.Method(errs.Package(), kernel.Words(method), err)
}

// errNilContext is the error of a call given a nil ctx.
var errNilContext = errs.Argument("nil context")

// checkKeyless is errs.Check for a method that names no key.
func checkKeyless(ctx context.Context, usable bool, method string) error {
	if usable && ctx == nil {
		return keyless(method, errNilContext)
	}
	return errs.Check(ctx, usable, method, "")
}

// errBadClaim is the error for a claim field the scripts did not write.
func errBadClaim(field, value string) error {
	return fmt.Errorf("field %q holds %q, not a claim", field, value)
}
