package sqltest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// start starts cmd, as the user as names (this process's own when as is
// nil), so that it dies with the process that started it, and a test
// binary killed by a timeout leaves no server behind. The signal follows
// the starting thread, so the thread is held.
func start(cmd *exec.Cmd, as *account) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if as != nil {
		attr.Credential = &syscall.Credential{Uid: as.uid, Gid: as.gid}
	}
	cmd.SysProcAttr = attr
	return cmd.Start()
}
