package redistest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the server die with the process that started
// it, so a test binary killed by a timeout leaves no server behind.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
