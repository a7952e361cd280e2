package slotlimitotel

// PendingLen returns how many calls o keeps waits for.
func PendingLen(o *Observer) int { return o.pending.len() }
