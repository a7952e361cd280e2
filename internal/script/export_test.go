package script

import "time"

// SetClusterPatience sets clusterPatience to d, and returns the function
// that sets it back.
func SetClusterPatience(d time.Duration) (restore func()) {
	old := clusterPatience
	clusterPatience = d
	return func() { clusterPatience = old }
}
