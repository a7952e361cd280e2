package sqltest

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNoServer is returned by StartPostgres when initdb and postgres are
// found neither on PATH nor in /usr/lib/postgresql/<version>/bin.
var ErrNoServer = errors.New("sqltest: initdb and postgres not found on PATH or in /usr/lib/postgresql/*/bin")

// debianBins matches the directories Debian and Ubuntu install each
// PostgreSQL version's server programs in, off PATH.
const debianBins = "/usr/lib/postgresql/*/bin"

// binDir returns the directory holding both initdb and postgres: the one
// initdb is found in on PATH, or else the newest version's under
// /usr/lib/postgresql.
func binDir() (string, error) {
	var dirs []string
	if initdb, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(initdb))
	}
	versions, _ := filepath.Glob(debianBins)
	slices.SortFunc(versions, func(a, b string) int {
		return -compareVersions(filepath.Base(filepath.Dir(a)), filepath.Base(filepath.Dir(b)))
	})
	dirs = append(dirs, versions...)
	for _, dir := range dirs {
		_, errInitdb := exec.LookPath(filepath.Join(dir, "initdb"))
		_, errPostgres := exec.LookPath(filepath.Join(dir, "postgres"))
		if errInitdb == nil && errPostgres == nil {
			return dir, nil
		}
	}
	return "", ErrNoServer
}

// compareVersions compares dotted versions such as "9.6" and "15" field by
// field, as numbers.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// An account is a user the server programs run as.
type account struct {
	uid, gid uint32
}

// serverAccount returns the account initdb and postgres must run as: nil,
// meaning this process's own, unless this process is root, which
// PostgreSQL refuses to run as; then the postgres system user, or else
// nobody.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, errUID := strconv.ParseUint(u.Uid, 10, 32)
		gid, errGID := strconv.ParseUint(u.Gid, 10, 32)
		if errUID == nil && errGID == nil {
			return &account{uid: uint32(uid), gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("sqltest: running as root, which PostgreSQL refuses, and found no postgres or nobody user to run it as")
}
