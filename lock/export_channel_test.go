package lock

// Channel returns the notice channel of the lock at key.
func Channel(key string) string {
	names, _ := keyNames(key)
	return names[numKeys]
}
