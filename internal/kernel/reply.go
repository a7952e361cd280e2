package kernel

import "github.com/slotlimit/slotlimit/internal/callerr"

// A Reply reads a script's reply that begins with a status, as every
// script of the module answers: an array whose first element is an
// integer, followed by the status's fields. A read of a field that is
// missing or of another type reads as zero and marks the reply
// unexpected, so that a decoder reads every field and checks Err once.
type Reply struct {
	v      any
	fields []any
	status int64
	bad    bool
}

// ReadReply returns the Reply of v, a script's reply.
func ReadReply(v any) Reply {
	r := Reply{v: v}
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		r.bad = true
		return r
	}
	r.status, ok = a[0].(int64)
	r.bad = !ok
	r.fields = a[1:]
	return r
}

// Status returns the reply's status.
func (r *Reply) Status() int64 { return r.status }

// Len returns the number of fields after the status.
func (r *Reply) Len() int { return len(r.fields) }

// Int returns field i, counted from 0 after the status, as an integer.
func (r *Reply) Int(i int) int64 {
	if i < len(r.fields) {
		if n, ok := r.fields[i].(int64); ok {
			return n
		}
	}
	r.bad = true
	return 0
}

// String returns field i, counted from 0 after the status, as a string.
func (r *Reply) String(i int) string {
	if i < len(r.fields) {
		if s, ok := r.fields[i].(string); ok {
			return s
		}
	}
	r.bad = true
	return ""
}

// Fields returns the fields after the status, for a decoder of a list.
func (r *Reply) Fields() []any { return r.fields }

// Want marks the reply unexpected unless ok: a status or a count of
// fields that the script never answers.
func (r *Reply) Want(ok bool) {
	if !ok {
		r.bad = true
	}
}

// Err returns the error of a reply that does not have the form its
// script promises, or nil.
func (r *Reply) Err() error {
	if r.bad {
		return callerr.UnexpectedReply(r.v)
	}
	return nil
}
