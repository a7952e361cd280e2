package skipnote

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// sink returns where the report goes. With -v (or -json) the go command
// shows the test's own output, so that is os.Stdout. Otherwise, when the
// test binary was started by "go test", the go command would drop the
// output of a passing package, so the line goes to the go command's own
// standard output, where it writes its "ok" line: through a duplicate of
// that very descriptor (pidfd_getfd), so that it shares its file offset
// when it is a file, or, failing that, by opening it anew when it is a
// pipe or a terminal, which have no offset to share. When neither can be
// had the line goes to os.Stdout, shown when the test fails or with -v.
// A run whose line went to the go command is kept from go test's cache,
// so that the next run prints it too.
func sink() io.WriteCloser {
	stdout := nopCloser{os.Stdout}
	if verbose() {
		return stdout
	}
	ppid := os.Getppid()
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
	if err != nil || !startedByGoTest(cmdline) {
		return stdout
	}
	dir := "/proc/" + strconv.Itoa(ppid)
	if f := dupFromParent(ppid, 1); f != nil {
		keepFromCache(dir)
		return f
	}
	path := dir + "/fd/1"
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			keepFromCache(dir)
			return f
		}
	}
	return stdout
}

// startedByGoTest reports whether cmdline, a NUL-separated argv, is that of
// "go test".
func startedByGoTest(cmdline []byte) bool {
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	if len(args) < 2 || filepath.Base(string(args[0])) != "go" {
		return false
	}
	return string(args[1]) == "test"
}

// The system call numbers of pidfd_open and pidfd_getfd, the same on every
// Linux architecture Go supports.
const (
	sysPidfdOpen  = 434
	sysPidfdGetfd = 438
)

// dupFromParent returns a duplicate of file descriptor fd of process pid,
// or nil when the kernel (before 5.6) or its permissions refuse.
func dupFromParent(pid, fd int) *os.File {
	pidfd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return nil
	}
	defer syscall.Close(int(pidfd))
	dup, _, errno := syscall.Syscall(sysPidfdGetfd, pidfd, uintptr(fd), 0)
	if errno != 0 {
		return nil
	}
	return os.NewFile(dup, "go test's standard output")
}
