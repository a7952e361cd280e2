package redpacket

import (
	"errors"
	"fmt"
	"strings"

	"github.com/slotlimit/slotlimit"
)

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
	ErrInvalidPacket error = &invalidInput{"redpacket: invalid packet"}

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
	ErrOutcomeUnknown = slotlimit.ErrOutcomeUnknown

	// ErrInvalidArgument is returned, with nothing sent, for a packet id
	// or user that is empty, longer than MaxIDLen bytes, not UTF-8, or
	// holds a NUL; by every method given a nil ctx; and by CreateSchema
	// for a nil database.
	ErrInvalidArgument = errors.New("redpacket: invalid argument")

	// ErrNotReplicated is wrapped by the error of a write that fewer than
	// Config.Replicas replicas acknowledged within ReplicaTimeout. The
	// write was made on the master, and may yet reach them, or be lost in
	// a failover.
	ErrNotReplicated = errors.New("redpacket: write not acknowledged by replicas")

	// ErrInvalidConfig is returned, with nothing sent, by New and
	// NewPersister for a nil client or a configuration that cannot work,
	// and by every method of a zero or nil Store or Persister, one that
	// New or NewPersister did not make.
	ErrInvalidConfig = errors.New("redpacket: invalid config")
)

// An invalidInput is an input error that also matches ErrInvalidArgument.
type invalidInput struct{ text string }

func (e *invalidInput) Error() string        { return e.text }
func (e *invalidInput) Is(target error) bool { return target == ErrInvalidArgument }

func invalidPacket(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidPacket}, args...)...)
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// errUnusable is the error of every method of a Store or Persister that
// New or NewPersister did not make.
var errUnusable = fmt.Errorf("%w: not made by New", ErrInvalidConfig)

// errNilContext is the error of every call given a nil ctx.
var errNilContext = invalidArgument("ctx is nil")

// errBadClaim is the error for a claim field the scripts did not write.
func errBadClaim(field, value string) error {
	return fmt.Errorf("field %q holds %q, not a claim", field, value)
}

// A methodError is an error of this package's, err, returned by a method
// op that names no packet: `redpacket: drain: invalid config: ...`.
type methodError struct {
	op  string
	err error
}

func (e *methodError) Error() string {
	return "redpacket: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "redpacket: ")
}

func (e *methodError) Unwrap() error { return e.err }
