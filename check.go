package slotlimit

import "fmt"

// MaxHolderLen is the longest holder ID accepted, in bytes.
const MaxHolderLen = 1024

// checkHolder returns an error matching ErrInvalidHolder for a holder ID
// that is empty or longer than MaxHolderLen.
func checkHolder(holder string) error {
	switch {
	case holder == "":
		return fmt.Errorf("%w: empty", ErrInvalidHolder)
	case len(holder) > MaxHolderLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidHolder, len(holder), MaxHolderLen)
	}
	return nil
}

// checkWeight returns an error matching ErrInvalidWeight for a weight n
// outside 1 to limit.
func checkWeight(n, limit int64) error {
	if n < 1 || n > limit {
		return fmt.Errorf("%w: %d units, must be 1 to the limit %d", ErrInvalidWeight, n, limit)
	}
	return nil
}
