package redpacket

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Limits on a Packet and on the strings that name packets and users.
const (
	// MaxShares is the most shares one packet may have, so that Create
	// stays one short script call.
	MaxShares = 100_000

	// MaxIDLen is the longest packet id or user, in bytes. Both must be
	// valid UTF-8 with no NUL, as a database's text column takes.
	MaxIDLen = 256

	// MaxTotal is the largest Total, 2^53-1: the largest integer that
	// Lua's numbers, in the scripts, hold exactly.
	MaxTotal = 1<<53 - 1

	// DefaultTTL is the TTL of a Packet that sets none.
	DefaultTTL = 24 * time.Hour
)

// A Packet is an amount to be shared out among the first Count users who
// grab it.
//
// Create refuses, with ErrInvalidPacket, an ID that is empty, longer than
// MaxIDLen bytes, not UTF-8 or holds a NUL; a Count below 1 or above
// MaxShares; a Total below Count (every share is at least 1) or above
// MaxTotal; a Split other than Random or Equal; and a TTL that is
// negative or under a millisecond.
type Packet struct {
	ID    string
	Total int64         // smallest currency unit (cents)
	Count int           // number of shares; each share >= 1
	Split Split         // Random (double-mean, as WeChat's) or Equal (shares that differ by at most 1)
	TTL   time.Duration // unclaimed shares expire after this; 0 means 24h
}

// A Split says how a packet's Total is cut into its Count shares.
type Split int

const (
	// Random cuts each share, in the order they will be taken, uniformly
	// between 1 and twice the mean of what is left (less 1, and leaving
	// at least 1 for each later share): WeChat's double-mean method. The
	// last share takes the rest. Every share's expected amount is the
	// mean, Total/Count.
	Random Split = iota

	// Equal cuts Total into shares that differ by at most 1: each is
	// Total/Count, and the first Total%Count shares taken get 1 more.
	Equal
)

// String returns "random" or "equal", or "Split(n)" for another value.
func (s Split) String() string {
	switch s {
	case Random:
		return "random"
	case Equal:
		return "equal"
	}
	return "Split(" + itoa(int64(s)) + ")"
}

// check validates p.
func (p Packet) check() error {
	switch {
	case !validID(p.ID):
		return errInvalidPacket("ID %q: must be 1 to %d bytes of UTF-8, with no NUL", p.ID, MaxIDLen)
	case p.Count < 1 || p.Count > MaxShares:
		return errInvalidPacket("Count is %d, must be 1 to %d", p.Count, MaxShares)
	case p.Total < int64(p.Count):
		return errInvalidPacket("Total is %d, below Count %d: every share is at least 1", p.Total, p.Count)
	case p.Total > MaxTotal:
		return errInvalidPacket("Total is %d, above MaxTotal", p.Total)
	case p.Split != Random && p.Split != Equal:
		return errInvalidPacket("Split is %v, must be Random or Equal", p.Split)
	case p.TTL < 0 || p.TTL > 0 && p.TTL < time.Millisecond:
		return errInvalidPacket("TTL is %v, must be 0 or at least 1ms", p.TTL)
	}
	return nil
}

// ttl is p's TTL, DefaultTTL for 0.
func (p Packet) ttl() time.Duration {
	if p.TTL == 0 {
		return DefaultTTL
	}
	return p.TTL
}

// shares cuts a valid p into its amounts, in the order they are taken.
// They sum to Total and each is at least 1.
func (p Packet) shares() []int64 {
	amounts := make([]int64, p.Count)
	left := p.Total
	for i := range amounts {
		k := int64(p.Count - i) // shares left to cut, this one included
		switch {
		case k == 1:
			amounts[i] = left
		case p.Split == Equal:
			amounts[i] = p.Total / int64(p.Count)
			if int64(i) < p.Total%int64(p.Count) {
				amounts[i]++
			}
		default:
			// Uniform in [1, hi]: below twice the mean, and leaving each
			// later share at least 1. left >= k, so hi >= 1.
			hi := min(2*left/k-1, left-(k-1))
			amounts[i] = 1 + rand.Int64N(max(hi, 1))
		}
		left -= amounts[i]
	}
	return amounts
}

// errInvalidPacket returns the error of a Packet that breaks a rule,
// which matches ErrInvalidPacket and says which.
func errInvalidPacket(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidPacket}, args...)...)
}
