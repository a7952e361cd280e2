//go:build !linux

package redistest

import "os/exec"

// setParentDeathSignal does nothing where the platform has no such signal.
func setParentDeathSignal(cmd *exec.Cmd) {}
