package recent

// DataKey returns the Redis key that holds l's items.
func DataKey(l *List) string { return l.keys[keyList] }
