//go:build !linux

package sqltest

import "os/exec"

// killServer sends SIGKILL to the postmaster cmd runs. The processes it
// forked exit when they notice, which a backend busy with a query does
// only once the query is done.
func killServer(cmd *exec.Cmd) {
	cmd.Process.Kill()
}
