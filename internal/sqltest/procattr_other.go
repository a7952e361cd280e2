//go:build !linux

package sqltest

import (
	"errors"
	"os/exec"
)

// start starts cmd. This platform has no parent-death signal, so a killed
// test binary may leave its server running; and cmd runs as this
// process's user, so as must be nil.
func start(cmd *exec.Cmd, as *account) error {
	if as != nil {
		return errors.New("sqltest: cannot run PostgreSQL as another user on this platform")
	}
	return cmd.Start()
}
