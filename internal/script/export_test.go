package script

import "time"

// SetClusterPatience sets clusterPatience to d, and returns the function
// that sets it back.
func SetClusterPatience(d time.Duration) (restore func()) {
	old := clusterPatience
	clusterPatience = d
	return func() { clusterPatience = old }
}

// Source returns the source s runs, its libraries spliced in.
func Source(s *Script) string { return s.src }
