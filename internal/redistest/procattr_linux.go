package redistest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startWithParentDeathSignal starts cmd so that it dies with the process
// that started it, and a test binary killed by a timeout leaves no server
// behind. The signal follows the starting thread, so the thread is held.
func startWithParentDeathSignal(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd.Start()
}
