// Package callerr reports the errors of calls to Redis: whether a failed
// call's outcome is unknown, and errors that name the package, the
// operation and the key, and match the context's error when the context
// cut the call short.
package callerr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrOutcomeUnknown is the one value every package of the module exports
// under its own name: the errors of Call match it when their outcome is
// unknown.
var ErrOutcomeUnknown error = outcomeUnknownError{}

type outcomeUnknownError struct{}

func (outcomeUnknownError) Error() string { return "slotlimit: outcome unknown" }

// OutcomeUnknown reports whether err, from a call to Redis, leaves it open
// whether the call wrote. A reply that came, of whatever form, does not
// (see UnexpectedReply). A call that a Runner sent says so itself (see
// Sent). Otherwise: a call that never got a connection (a failed dial, a
// pool that gave none, a closed client) was never sent; an error reply
// proves nothing was written only when Redis refuses a command the same
// way however often it is sent (see Refused); anything else (a timeout, a
// broken connection, a context that ended mid-call, or a reply such as
// WAIT's UNBLOCKED, LOADING, READONLY or MOVED, which can follow a send
// whose reply was lost, or the run of the command itself) may have struck
// after the call wrote. A package's own errors for calls it never sent,
// such as invalid input, are its to tell apart.
func OutcomeUnknown(err error) bool {
	var unexpected *unexpectedReplyError
	if errors.As(err, &unexpected) {
		return false
	}
	var sent *sentError
	if errors.As(err, &sent) {
		return sent.maybe
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		return !errors.Is(err, redis.Nil) && !Refused(reply)
	}
	if errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var netErr *net.OpError
	return !(errors.As(err, &netErr) && netErr.Op == "dial")
}

// refusals are the prefixes of the error replies with which Redis refuses
// a command before it runs, and refuses it again however often it is
// sent: a script that is not cached, a key of another type, a user
// without the right, an argument error (ERR, which a script's own
// refusals use too). "ERR max number of clients" is not one: a second
// connection may be let in.
var refusals = []string{"ERR ", "WRONGTYPE ", "NOSCRIPT ", "NOPERM ", "NOAUTH ", "WRONGPASS "}

// Refused reports whether err is an error reply that proves the command
// wrote nothing (see refusals).
func Refused(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := reply.Error()
	if strings.HasPrefix(msg, "ERR max number of clients") {
		return false
	}
	for _, prefix := range refusals {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// Sent returns err, from a call whose every try the caller watched, marked
// with what it knows: maybe, whether any try may have written. An error
// so marked answers OutcomeUnknown with maybe, whatever it wraps: a
// context that ended while no try was on the wire wrote nothing, and a
// refusal that follows a try whose reply was lost does not prove that
// try wrote nothing.
func Sent(err error, maybe bool) error {
	if err == nil {
		return nil
	}
	return &sentError{err: err, maybe: maybe}
}

// A sentError is an error marked by Sent.
type sentError struct {
	err   error
	maybe bool
}

func (e *sentError) Error() string { return e.err.Error() }
func (e *sentError) Unwrap() error { return e.err }

// ContextDone is ctx.Err(), counting a deadline that has passed as
// exceeded even before ctx's own timer has fired: go-redis sets the
// connection's deadline to ctx's, and the read can time out a moment
// before ctx is marked done.
func ContextDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Op returns err prefixed with the package pkg, the operation op and the
// key, as `slotlimit: acquire "ar:1": ...`, so that a WRONGTYPE reply or a
// connection error says where it came from. The package is named once:
// an err of pkg's own, such as "lock: not held", loses its prefix in the
// text, as `lock: refresh "k": not held`. The error wraps err, for
// errors.Is and errors.As.
func Op(pkg, op, key string, err error) error {
	return &opError{pkg: pkg, op: op, key: key, errs: []error{err}}
}

// Call is Op for the error of a call made with ctx: when ctx is done and
// err leaves the outcome unknown (go-redis reports a ctx deadline as an
// i/o timeout when ContextTimeoutEnabled is set), the error matches
// ctx.Err() as well as err.
//
// When err leaves the outcome unknown, the error also matches the
// module's ErrOutcomeUnknown (see Is).
func Call(ctx context.Context, pkg, op, key string, err error) error {
	e := &opError{pkg: pkg, op: op, key: key, errs: []error{err}, unknown: OutcomeUnknown(err)}
	if ctxErr := ContextDone(ctx); ctxErr != nil && e.unknown && !errors.Is(err, ctxErr) {
		e.errs = []error{ctxErr, err}
	}
	return e
}

// Method returns err prefixed with the package pkg and the operation op,
// as `lock: refresh: ...`, for an error that has no key to name, such as
// that of a handle not made by New. It wraps err.
func Method(pkg, op string, err error) error {
	return &opError{pkg: pkg, op: op, keyless: true, errs: []error{err}}
}

// An opError is an error of operation op of package pkg on key.
type opError struct {
	pkg, op, key string
	keyless      bool // the error names no key
	errs         []error
	unknown      bool // the call was sent and its outcome is unknown
}

// Is reports whether target is ErrOutcomeUnknown and e's outcome is
// unknown.
func (e *opError) Is(target error) bool {
	return target == ErrOutcomeUnknown && e.unknown
}

func (e *opError) Error() string {
	var b strings.Builder
	if e.keyless {
		fmt.Fprintf(&b, "%s: %s", e.pkg, e.op)
	} else {
		fmt.Fprintf(&b, "%s: %s %q", e.pkg, e.op, e.key)
	}
	for _, err := range e.errs {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(err.Error(), e.pkg+": "))
	}
	return b.String()
}

func (e *opError) Unwrap() []error { return e.errs }

// UnexpectedReply returns the error for a script's reply that does not
// have the form the script promises. A reply came, so its outcome is
// not unknown (see OutcomeUnknown).
func UnexpectedReply(reply any) error {
	return &unexpectedReplyError{reply: reply}
}

type unexpectedReplyError struct{ reply any }

func (e *unexpectedReplyError) Error() string { return fmt.Sprintf("unexpected reply %v", e.reply) }
