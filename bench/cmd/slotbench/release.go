package main

import (
	"errors"

	"github.com/slotlimit/slotlimit"
)

// notHeldIsNil is the error of a release where the holder may hold
// nothing (a second release, a lease that lapsed under load): nil for
// slotlimit.ErrNotHeld, else err.
func notHeldIsNil(err error) error {
	if errors.Is(err, slotlimit.ErrNotHeld) {
		return nil
	}
	return err
}
