package slotlimit

import "time"

// queueTTL is how long a waiter keeps its place in the queue without
// trying again, so a waiter that dies leaves the queue then; it is also
// the claim time of units a release hands to a waiter.
const queueTTL = 3 * time.Second

// queueTTLArg is queueTTL as a script argument, boxed once.
var queueTTLArg any = formatMillis(queueTTL)
