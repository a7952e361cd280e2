package sqltest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/slotlimit/slotlimit/internal/loopback"
)

// RequireEnv, set to 1, turns a missing PostgreSQL into a test failure
// instead of a skip.
const RequireEnv = "SLOTLIMIT_REQUIRE_POSTGRES"

// superuser is the name of the superuser initdb creates, whom every
// connection logs in as, without a password.
const superuser = "postgres"

const (
	initTimeout   = 60 * time.Second // bounds initdb
	startTimeout  = 20 * time.Second // bounds the wait for a new server to accept connections
	killTimeout   = 10 * time.Second // bounds the wait for a killed server to exit and free its port
	createTimeout = 30 * time.Second // bounds CREATE DATABASE and DROP DATABASE
)

// A Postgres is a PostgreSQL server listening on 127.0.0.1, with its data
// in a temporary directory of its own. CreateDatabase and Open may be
// called from several goroutines at once; Kill, Restart and Close may
// not run alongside any other method.
type Postgres struct {
	// DSN connects as the superuser to the server's "postgres" database:
	// postgres://postgres@127.0.0.1:port/postgres?sslmode=disable.
	DSN  string
	Addr string // host:port

	bin    string   // the directory of initdb and postgres
	dir    string   // holds data/, the server's socket and its log
	as     *account // the user the server runs as; nil for this process's own
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// StartPostgres creates a database cluster in a fresh temporary directory
// and starts a postgres on a free loopback port to serve it, then waits
// until it accepts connections. The cluster trusts every local
// connection, is UTF8, and has the superuser "postgres". The server runs
// with fsync on, as in production; a committed transaction survives Kill.
// When this process is root, the server runs as the postgres system user
// (or nobody), since PostgreSQL refuses to run as root. StartPostgres
// returns ErrNoServer when PostgreSQL is not installed; Close stops the
// server.
func StartPostgres() (*Postgres, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	as, err := serverAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "slotlimit-postgres-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{bin: bin, dir: dir, as: as}
	if err := p.init(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A port found free can be taken before the server binds it; try a few.
	for range 5 {
		if p.Addr, err = loopback.FreeAddr(); err != nil {
			break
		}
		p.DSN = p.dsn("postgres")
		if err = p.run(); err == nil {
			return p, nil
		}
	}
	os.RemoveAll(dir)
	return nil, fmt.Errorf("sqltest: could not start postgres: %w", err)
}

// init hands p.dir to the server's user and runs initdb in it.
func (p *Postgres) init() error {
	if err := os.Chmod(p.dir, 0o700); err != nil {
		return err
	}
	if p.as != nil {
		if err := os.Chown(p.dir, int(p.as.uid), int(p.as.gid)); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, "initdb"),
		"-D", p.dataDir(),
		"-U", superuser,
		"-A", "trust",
		"-E", "UTF8",
		"--locale=C",
		"--no-sync", // the cluster is thrown away if the machine crashes
	)
	err := p.spawn(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("sqltest: initdb: %v\n%s", err, p.logTail())
	}
	return nil
}

// run starts postgres on p.Addr and waits until it accepts connections.
func (p *Postgres) run() error {
	_, port, _ := net.SplitHostPort(p.Addr)
	cmd := exec.Command(filepath.Join(p.bin, "postgres"),
		"-D", p.dataDir(),
		"-p", port,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+p.dir,
		"-c", "fsync=on",
		"-c", "shared_buffers=16MB",
		"-c", "max_connections=100",
		"-c", "logging_collector=off",
	)
	if err := p.spawn(cmd); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited

	// Ask through the server's socket in p.dir, which no other server can
	// answer on. The postmaster creates it once it has bound its TCP
	// port, and exits if it cannot: an answer means the port is p's too.
	db, err := sql.Open("pgx", p.socketDSN())
	if err != nil {
		p.kill()
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			p.cmd = nil
			return fmt.Errorf("postgres on %s exited at start:\n%s", p.Addr, p.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("postgres on %s not ready within %v: %v\n%s", p.Addr, startTimeout, err, p.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spawn starts cmd in p.dir as the server's user, with its output
// appended to the log.
func (p *Postgres) spawn(cmd *exec.Cmd) error {
	log, err := os.OpenFile(p.logPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own copy
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = log, log
	return start(cmd, p.as)
}

// Kill stops the server at once, as a crash would: it sends SIGKILL to the
// postmaster and to the processes it forked, and waits, for up to 10s,
// until none of them runs and the port is free. Committed transactions
// survive; Restart recovers them. Kill does nothing if the server is not
// running.
func (p *Postgres) Kill() {
	p.kill()
}

func (p *Postgres) kill() {
	if p.cmd == nil {
		return
	}
	killServer(p.cmd)
	select {
	case <-p.exited:
	case <-time.After(killTimeout):
	}
	loopback.AwaitClosed(p.Addr, killTimeout)
	p.cmd = nil
}

// Restart kills the server (see Kill), and starts it again on the same
// port and data directory, where it recovers from the crash before it
// accepts connections. Connections open before the kill are broken: a
// *sql.DB replaces them, but a call may fail once on one.
func (p *Postgres) Restart() error {
	p.kill()
	if err := p.run(); err != nil {
		return fmt.Errorf("sqltest: could not restart postgres: %w", err)
	}
	return nil
}

// Close stops the server and removes its data directory. It may be called
// more than once.
func (p *Postgres) Close() {
	p.kill()
	os.RemoveAll(p.dir)
}

// CreateDatabase creates a database no other test uses, dropped when tb
// ends, and returns its DSN. It fails tb if the server does not create it.
func (p *Postgres) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	name := databaseName(tb.Name())
	if err := p.admin("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("sqltest: create database %s: %v", name, err)
	}
	// Best effort: the test may have killed the server, or be holding
	// connections in processes of its own, which FORCE ends.
	tb.Cleanup(func() { p.admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	return p.dsn(name)
}

// Open returns a *sql.DB, with the "pgx" driver, on a database no other
// test uses (see CreateDatabase), so that tests sharing a server see none
// of each other's tables. The *sql.DB is closed, and the database
// dropped, when tb ends.
func (p *Postgres) Open(tb testing.TB) *sql.DB {
	tb.Helper()
	return open(tb, "pgx", p.CreateDatabase(tb))
}

// admin runs statement on the postgres database, as the superuser.
func (p *Postgres) admin(statement string) error {
	db, err := sql.Open("pgx", p.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), createTimeout)
	defer cancel()
	_, err = db.ExecContext(ctx, statement)
	return err
}

// dsn returns the DSN of database on p.
func (p *Postgres) dsn(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(superuser),
		Host:     p.Addr,
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// socketDSN returns the DSN of the postgres database on p through p's
// Unix socket.
func (p *Postgres) socketDSN() string {
	_, port, _ := net.SplitHostPort(p.Addr)
	q := url.Values{"host": {p.dir}, "port": {port}, "user": {superuser}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", Path: "/postgres", RawQuery: q.Encode()}
	return u.String()
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }
func (p *Postgres) logPath() string { return filepath.Join(p.dir, "postgres.log") }

// logTail returns the end of the log, for error messages.
func (p *Postgres) logTail() string {
	const tail = 4 << 10
	b, err := os.ReadFile(p.logPath())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > tail {
		b = b[len(b)-tail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return fmt.Sprintf("%s:\n%s", p.logPath(), strings.TrimRight(string(b), "\n"))
}

// databaseName returns a database name no other test uses: a letter, the
// letters and digits of the test's name, and random hex.
func databaseName(test string) string {
	var b strings.Builder
	b.WriteString("t_")
	for _, r := range strings.ToLower(test) {
		if b.Len() >= 40 {
			break
		}
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
		} else if r == '_' || r == '/' {
			b.WriteByte('_')
		}
	}
	var random [6]byte
	rand.Read(random[:])
	b.WriteString("_" + hex.EncodeToString(random[:]))
	return b.String()
}
