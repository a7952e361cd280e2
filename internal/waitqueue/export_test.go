package waitqueue

import "time"

// QueuedTry records the outcome of a try sent at sent, answered a
// millisecond later, as loop does.
func (w *Wait) QueuedTry(t Try, sent time.Time) { w.queued(t, sent, sent.Add(time.Millisecond)) }
