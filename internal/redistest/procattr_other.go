//go:build !linux

package redistest

import "os/exec"

// startWithParentDeathSignal starts cmd; this platform has no parent-death
// signal, so a killed test binary may leave its server running.
func startWithParentDeathSignal(cmd *exec.Cmd) error {
	return cmd.Start()
}
