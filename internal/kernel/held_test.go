package kernel_test

import (
	"errors"
	"testing"

	"github.com/slotlimit/slotlimit/internal/kernel"
)

func TestHeld(t *testing.T) {
	failed := errors.New("failed")
	for i, s := range []struct {
		status     int64
		err        error
		held       bool
		unexpected bool
	}{
		{1, nil, true, false},
		{0, nil, false, false},
		{2, nil, false, true},
		{-1, nil, false, true},
		{1, failed, false, false},
	} {
		held, err := kernel.Held(s.status, s.err)
		if held != s.held {
			t.Errorf("step %d: held %v, want %v", i, held, s.held)
		}
		switch {
		case s.err != nil && err != s.err:
			t.Errorf("step %d: err %v, want %v", i, err, s.err)
		case s.unexpected && err == nil:
			t.Errorf("step %d: err %v, want an unexpected reply", i, err)
		case s.err == nil && !s.unexpected && err != nil:
			t.Errorf("step %d: err %v", i, err)
		}
	}
}
