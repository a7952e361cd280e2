package lock

// Channel returns the notice channel of the lock at key.
func Channel(key string) string {
	_, channel, _ := keyNames(key)
	return channel
}
