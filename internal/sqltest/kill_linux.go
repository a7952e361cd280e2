package sqltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killServer sends SIGKILL to the postmaster cmd runs and to the processes
// it forked, and waits, for up to killTimeout, until none of its children
// runs. Left to themselves, they would exit only when they next wait for
// something, and a backend busy with a query would keep the server's
// shared memory, beside which a new postmaster refuses to start. Each
// child calls setsid and leaves the postmaster's process group, so the
// children are found in /proc, with the postmaster stopped so that it
// forks none unseen.
func killServer(cmd *exec.Cmd) {
	if cmd.Process.Signal(syscall.SIGSTOP) != nil {
		return // it has exited already
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(killTimeout)
	for s := state(pid); s != 'T' && alive(s) && time.Now().Before(deadline); s = state(pid) {
		time.Sleep(time.Millisecond)
	}
	children := children(pid)
	cmd.Process.Kill()
	for _, child := range children {
		syscall.Kill(child, syscall.SIGKILL)
	}
	for _, child := range children {
		for alive(state(child)) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var found []int
	for _, path := range stats {
		child, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if err == nil && parent(child) == pid {
			found = append(found, child)
		}
	}
	return found
}

// stat returns the fields of /proc/pid/stat that follow the command name,
// the state first, or nil when there is no such process.
func stat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// state returns the state letter of process pid, 0 if there is none.
func state(pid int) byte {
	if f := stat(pid); len(f) > 0 {
		return f[0][0]
	}
	return 0
}

// parent returns the parent of process pid, 0 if there is none.
func parent(pid int) int {
	if f := stat(pid); len(f) > 1 {
		ppid, _ := strconv.Atoi(f[1])
		return ppid
	}
	return 0
}

// alive reports whether a process in state can still run or hold memory:
// it is neither gone (0) nor dead (Z, X).
func alive(state byte) bool {
	return state != 0 && state != 'Z' && state != 'X'
}
