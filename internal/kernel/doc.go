// Package kernel holds, once, the house rules that every package of the
// module follows (docs/api.md), so that each package is its scripts and
// its types and nothing more:
//
//   - Errors, a package's error set: ErrInvalidConfig,
//     ErrInvalidArgument, ErrNotHeld and ErrNotReplicated, and the one
//     ErrOutcomeUnknown, and the errors of its calls, each naming the
//     package, the method and the key, before and after anything is sent;
//   - Base, the skeleton of every value New makes: the nil-client check,
//     the checks of Key, TTLs and Replicas, the script runner, the
//     Observer, and the check, at the start of each call, that the value
//     was made by New and ctx is not nil;
//   - Reply, the one reader of a script's status-first reply.
package kernel
