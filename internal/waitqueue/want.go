package waitqueue

import (
	"math"
	"strconv"
	"strings"
)

// WantLimit reads the waiter's limit from an entry of a queue's wants
// hash, 'n:lease ms:limit' (see wanted in queue.lua). It reports false for
// an entry that records no limit ('n:lease ms'), and for the value of the
// field named by the empty string, the last arrival number.
func WantLimit(want string) (int64, bool) {
	parts := strings.Split(want, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var v [3]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return 0, false
		}
		v[i] = n
	}
	if v[2] < 1 || v[2] > math.MaxInt64 {
		return 0, false
	}
	return int64(v[2]), true
}
