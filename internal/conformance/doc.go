// Package conformance checks that a package of the module keeps the
// house rules of docs/api.md, in the spirit of testing/fstest.TestFS: a
// package's test describes what it makes and calls Run, and Run checks
// every rule, each in a subtest, so that the rules are checked once for
// all packages instead of package by package.
//
// # Use
//
// A package's conformance_test.go gives Run a Package: its name, its
// sentinels, a constructor given (client, key, observer), and one call
// of each verb. A verb of the value New makes is a Method; a verb of
// something that value hands out (a Lock, a Lease, a Message, a Slot, a
// holder's ID) is On a Hold, which says how to take one:
//
//	held := conformance.Hold[*lock.Mutex, *lock.Lock]{Name: "Lock",
//		Take: func(ctx context.Context, m *lock.Mutex, _ string) (*lock.Lock, error) { return m.TryLock(ctx) }}
//	conformance.Run(t, conformance.Package[*lock.Mutex]{
//		Name: "lock", InvalidConfig: lock.ErrInvalidConfig, InvalidArgument: lock.ErrInvalidArgument, NotHeld: lock.ErrNotHeld,
//		New: func(client redis.UniversalClient, key string, obs observe.Observer) (*lock.Mutex, error) {
//			return lock.New(client, lock.Config{Key: key, Observer: obs})
//		},
//		Verbs: []conformance.Verb[*lock.Mutex]{
//			conformance.Method("TryLock", conformance.Try, func(ctx context.Context, m *lock.Mutex, _ string) (any, error) {
//				l, err := m.TryLock(ctx)
//				return l != nil, err
//			}),
//			conformance.On(held, "Unlock", conformance.Release, func(ctx context.Context, _ *lock.Mutex, l *lock.Lock) (any, error) {
//				return nil, l.Unlock(ctx)
//			}),
//		},
//	})
//
// Each call returns what it answered (compared between two runs, so a
// value that two runs share: a bool, a count) and its error. The Kind of
// a verb says which rules apply to it.
//
// # The checks
//
// Each check runs on miniredis and on a real Redis (skipped when none can
// be had, or failed when SLOTLIMIT_REQUIRE_REDIS=1), every verb on a key
// of its own:
//
//   - NilClient: New refuses a nil client, untyped or a typed nil, with
//     ErrInvalidConfig, and the error begins with the package's name.
//   - NewSendsNothing: New sends no command and dials no connection.
//   - ZeroHandles: every verb of a nil or zero value, and every verb given
//     a nil or zero handle, returns ErrInvalidConfig naming the package
//     and the method, panics not, and sends nothing.
//   - NilContext: every verb given a nil context returns
//     ErrInvalidArgument naming the package, the method and the key, and
//     sends nothing.
//   - NotHeld: a Release or Renew of what the caller no longer holds
//     returns ErrNotHeld, named, and changes none of the data there was,
//     another caller's hold included.
//   - Lapsed (miniredis): a Release or Renew of a hold left to lapse, the
//     Package's Lapse, on the server's clock, returns ErrNotHeld, named.
//   - ErrorText: a call that meets another type's value in its keys fails
//     with an error that names the package, the method (in words:
//     "TryAcquire" is "try acquire") and the key, quoted, and is a known
//     outcome; a write reports it as its one final Observer event.
//   - Observer: a write reports exactly one final event, last, with the
//     package, the method's Go name as Op, and the key.
//   - LostReply (a real Redis): a write whose reply is cut once, through
//     redistest's ReplyCutter, so that go-redis sends it again, takes
//     effect once and answers as a call whose reply was not lost; a verb
//     marked Again (its docs say a second run answers as a second call)
//     answers in the safe direction.
//   - LostForGood (a real Redis): a write whose every reply is cut fails
//     with ErrOutcomeUnknown, named.
//
// Every known outcome the suite meets (a refusal by Redis, ErrNotHeld, a
// nil value or context) must not match ErrOutcomeUnknown. Only tests
// import this package.
package conformance
