package conformance

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/observe"
)

// A Package describes one value a package's New makes, of type M (such as
// *lock.Mutex), to Run: how to make it and one call of each of its verbs.
type Package[M any] struct {
	// Name is the package's name, which begins every error's text and
	// every Observer event's Package.
	Name string

	// The package's sentinels. NotHeld is nil for a package that hands
	// out nothing to hold.
	InvalidConfig, InvalidArgument, NotHeld error

	// New makes a value with client, keeping its data at key (a package
	// whose calls name their keys ignores it, and its verbs use it), that
	// reports to obs. It must not contact Redis.
	New func(client redis.UniversalClient, key string, obs observe.Observer) (M, error)

	// Verbs are the value's methods, and those of the values it hands
	// out, each called once.
	Verbs []Verb[M]

	// Lapse is how long what the value hands out stays held unrenewed
	// (the TTL, or the Visibility, that New gave it), so that a hold the
	// suite lets lapse on miniredis's clock is no longer held; 0 when
	// nothing it hands out lapses.
	Lapse time.Duration
}

// A Kind is what kind of call a verb is, as docs/api.md names them.
type Kind int

const (
	Try     Kind = iota + 1 // takes at once, or is refused: TryAcquire, TryLock, Allow, Grab
	Wait                    // takes, waiting until it can: Acquire, Lock, Poll
	Renew                   // extends what is held: Renew, Refresh, Extend
	Release                 // frees what is held: Release, Unlock, Ack
	Inspect                 // reads, and never writes: Count, Len, Inspect
	Write                   // any other write: Push, Add, Create, Reset
	Loop                    // runs until its context ends: Run, KeepAlive
)

var kindNames = [...]string{Try: "try", Wait: "wait", Renew: "renew", Release: "release",
	Inspect: "inspect", Write: "write", Loop: "loop"}

func (k Kind) String() string { return kindNames[k] }

// writes reports whether a call of kind k writes.
func (k Kind) writes() bool { return k != Inspect && k != Loop }

// A Verb is one method, called once. Make it with Method or On.
type Verb[M any] struct {
	Name string // the method's Go name: "TryAcquire"
	Kind Kind

	// Keyless says that the method works on no one key, so that its
	// errors name none and its events carry none.
	Keyless bool

	// Again says that a second run of the call, when its reply is lost
	// and go-redis sends it again, answers as a second call would, as the
	// method's doc says (ratelimit's Allow counts the events again,
	// recent's Remove counts only what the first run left), always in the
	// safe direction. Its lost reply is then checked to answer as a first
	// call or a second, to leave the data as one call or two would, and
	// to be followed by a call that answers as a third: the call must be
	// one whose second call answers as every later one (a refusal, a 0),
	// so that it never admits beyond its limit.
	Again bool

	hold  string // the name of what call is given to hold, or ""
	take  func(ctx context.Context, m M, key string) (any, error)
	lose  func(ctx context.Context, m M, h any) (any, error) // or nil
	alone bool                                               // Hold.Nameless
	zeros []any                                              // the nil and zero values of what is held, when it is a handle
	call  func(ctx context.Context, m M, key string, held any) (any, error)
}

// Method returns the verb name of M itself, of kind, made by call: one
// call of the method on m, given key (the key m was made with), that
// returns what the call answered, for comparing two runs, and its error.
func Method[M any](name string, kind Kind, call func(ctx context.Context, m M, key string) (any, error)) Verb[M] {
	return Verb[M]{Name: name, Kind: kind,
		call: func(ctx context.Context, m M, key string, _ any) (any, error) { return call(ctx, m, key) }}
}

// A Hold is something a value of type M hands out, of type H, that
// verbs act on: a handle such as a *lock.Lock, a *slotlimit.Lease or a
// delayqueue.Message, or a holder's ID, a pushed message's ID.
type Hold[M, H any] struct {
	// Name names it in the subtests: "Lock", "holder".
	Name string
	// Take returns one, held by the caller, from m made with key.
	Take func(ctx context.Context, m M, key string) (H, error)
	// Lose, if set, lets h go as the package's docs say a caller can
	// lose it (a release, then a lapse), and returns it as the caller
	// then has it: something the caller no longer holds. Without it, the
	// first Release verb of the hold lets h go: a release made twice.
	Lose func(ctx context.Context, m M, h H) (H, error)
	// Nameless says that what is held carries no name of its holder (a
	// Counter's slot), so that a release frees anyone's: "not held" is
	// then checked with no other caller holding one.
	Nameless bool
}

// On returns the verb name, of kind, called on something of hold: call
// makes the call with m and h, and returns as Method's call does. When H
// is a handle (a pointer or a struct), its nil and zero values are
// checked too. For a Release or Renew, "not held" is what hold.Lose
// returns.
func On[M, H any](hold Hold[M, H], name string, kind Kind, call func(ctx context.Context, m M, h H) (any, error)) Verb[M] {
	var lose func(ctx context.Context, m M, h any) (any, error)
	if hold.Lose != nil {
		lose = func(ctx context.Context, m M, h any) (any, error) { return hold.Lose(ctx, m, h.(H)) }
	}
	return Verb[M]{Name: name, Kind: kind, hold: hold.Name, lose: lose, alone: hold.Nameless,
		take:  func(ctx context.Context, m M, key string) (any, error) { return hold.Take(ctx, m, key) },
		zeros: zeros[H](),
		call: func(ctx context.Context, m M, _ string, h any) (any, error) {
			held, _ := h.(H) // the zero H for a value of M not made by New
			return call(ctx, m, held)
		}}
}

// zeros returns the nil and zero values of T when T is a handle: a
// pointer's nil and a pointer to a zero value, or a struct's zero value.
func zeros[T any]() []any {
	var zero T
	switch t := reflect.TypeFor[T](); t.Kind() {
	case reflect.Pointer:
		return []any{zero, reflect.New(t.Elem()).Interface().(T)}
	case reflect.Struct:
		return []any{zero}
	}
	return nil
}

// title returns the verb's name as its subtest's: "Unlock" of the Lock
// hold is "Lock.Unlock".
func (v *Verb[M]) title() string {
	if v.hold != "" {
		return v.hold + "." + v.Name
	}
	return v.Name
}

// zeroOf returns the nil and zero values of M, as zeros does.
func zeroOf[M any]() []M {
	var out []M
	for _, z := range zeros[M]() {
		out = append(out, z.(M))
	}
	return out
}

// isNil reports whether x holds a nil pointer.
func isNil(x any) bool {
	v := reflect.ValueOf(x)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Stopped returns the cause of work, the context a KeepAlive returns,
// once it has ended, for a verb of kind Loop: KeepAlive refuses what Run
// calls it with by ending work at once. It gives up after a while, with
// an error that says work is still running.
func Stopped(work context.Context) error {
	select {
	case <-work.Done():
		return context.Cause(work)
	case <-time.After(callTimeout):
		return errors.New("still running")
	}
}

// Again returns v, marked as answering Again.
func Again[M any](v Verb[M]) Verb[M] {
	v.Again = true
	return v
}

// Keyless returns v, marked Keyless.
func Keyless[M any](v Verb[M]) Verb[M] {
	v.Keyless = true
	return v
}
