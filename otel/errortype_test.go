package slotlimitotel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/lock"
)

// A write the replicas did not acknowledge is error.type not_replicated,
// in each package that has Config.Replicas.
func TestNotReplicatedErrorType(t *testing.T) {
	for _, err := range []error{slotlimit.ErrNotReplicated, lock.ErrNotReplicated, adaptive.ErrNotReplicated} {
		assert.Equal(t, "not_replicated", errorType(fmt.Errorf("call: %w: 0 of 1", err)), "%v", err)
	}
}
