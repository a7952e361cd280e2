// Command slotlimit shows, for operators, what the slotlimit packages keep
// in Redis, and repairs it: the holders and the queue of a limiter, a
// force-release that hands the units on to a waiter as a release does, a
// live view, a lock's owner, which it can break, a delay queue's counts
// and dead letters, a recent list's items, a red packet's shares and
// claims, a rate limit's allowance, and an adaptive limit beside the slots
// in use, once or live.
//
//	slotlimit -u 127.0.0.1:6379 holders ar:0571
//	slotlimit -u 127.0.0.1:6379 holders ar:0571 -json
//	slotlimit -u 127.0.0.1:6379 release ar:0571 device-17
//	slotlimit -u 127.0.0.1:6379 watch ar:0571
//	slotlimit -u 127.0.0.1:6379 lock break jobs:nightly
//	slotlimit -u 127.0.0.1:6379 queue stats jobs:emails
//	slotlimit -u 127.0.0.1:6379 recent list recent:42
//	slotlimit -u 127.0.0.1:6379 packet show p1
//	slotlimit -u 127.0.0.1:6379 rate show user:42
//	slotlimit -u 127.0.0.1:6379 adaptive watch payments
//
// Every command goes through the packages' own scripts and types, so it
// reads and writes the keys exactly as the library does. Run slotlimit -h
// for the commands, their flags and the exit codes; README.md shows them
// at work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/adaptive"
	"github.com/slotlimit/slotlimit/delayqueue"
	"github.com/slotlimit/slotlimit/lock"
	"github.com/slotlimit/slotlimit/ratelimit"
	"github.com/slotlimit/slotlimit/recent"
	"github.com/slotlimit/slotlimit/redpacket"
)

// The exit codes; usage (slotlimit -h) and README.md document them.
const (
	exitOK    = 0 // done; for a question, the answer is yes
	exitNo    = 1 // the answer is no: nothing held, nothing to break, declined
	exitUsage = 2 // bad usage: command, flags, arguments, URL, key or holder
	exitRedis = 3 // Redis unreachable, or it answered with an error
)

// usage is the text of slotlimit -h.
const usage = `slotlimit shows and repairs what the slotlimit packages keep in Redis.

Usage:
  slotlimit [-u URL] [flags] COMMAND [flags] ARGS [flags]

Every package:
  ls [PATTERN]          every primitive found, whatever package made it: its kind,
                        key and state in one line; only those whose key matches
                        PATTERN (a glob, as SCAN MATCH takes it), of -kind K
                        when given. Walks every key, in SCAN batches of 1000,
                        on every master of a Cluster

Limiter (package slotlimit):
  count KEY             the units in use, against the limit
  holders KEY           the live leases, with time left and units, and the queue
  release KEY HOLDER    force-release HOLDER: its units go to the first waiters that
                        fit, exactly as a release's do
  watch KEY             a live view, redrawn every second: units in use against the
                        limit, holders with time left, queue length, refusals

Lock (package lock):
  lock info KEY         the owner's token and description, the time left on its
                        lease, the waiters, and the fence floor
  lock break KEY        free the lock as its owner's unlock would: the first waiter
                        is handed it; asks first, unless -yes

Delay queue (package delayqueue):
  queue stats KEY       the messages ready, delayed, in flight and dead
  queue list KEY        the messages in each state (-state S), with their payloads
  queue dead KEY        the dead letters, oldest first, with their payloads
  queue cancel KEY ID...
                        delete ready and delayed messages before they are
                        delivered; asks first, unless -yes
  queue requeue KEY ID...
                        move dead letters back to the queue, due now
  queue drop KEY ID...  delete dead letters for good; asks first, unless -yes

Recent list (package recent):
  recent list KEY       the items, newest first, with the time of their last add
  recent remove KEY VALUE...
                        take values out of the list

Red packet (package redpacket):
  packet show ID        the shares and amount left, and the claims taken

Rate limit (package ratelimit):
  rate show KEY         the limit recorded beside KEY, the events it allows now, and
                        when it is full again; -rate N [-period D] [-burst N] overrides
  rate reset KEY        give KEY its full allowance again

Adaptive limit (package adaptive):
  adaptive show KEY     the shared limit beside the slots in use, the waiters, when
                        the limit last went down and up, and the holders with time left
  adaptive watch KEY    a live view, redrawn every second: the limit beside the slots
                        in use, with both over the last screens, and the holders

A live page (every primitive found):
  web                   serve a live page of every primitive in the Redis, with plots
                        of the last minutes and a page for each; read-only unless
                        -allow-writes. Listens on 127.0.0.1:8379 unless -listen ADDR;
                        its first line is "listening on http://ADDR"

Flags go anywhere after the command's name, before or after its arguments; the
common flags may come before the command too. After --, every word is an
argument, so an ID that begins with - goes there:
  slotlimit -u URL release KEY -- -device-17

Common flags:
  -u URL         redis://[user:password@]host:port[/db], rediss://..., or host:port;
                 default $REDIS_URL, or localhost:6379 when it is not set
  -cluster       the URL names a node of a Redis Cluster (add others with ?addr=host:port)
  -json          JSON for scripts, instead of tables for people (not web)
  -timeout D     the bound on each call to Redis (default 5s)

Command flags:
  -limit N       count, holders, release, watch: the key's limit (see Limits below)
  -n COUNT       watch, adaptive watch: exit after COUNT screens; 0, the default,
                 runs until Ctrl-C.
                 queue dead: the most listed (default 100, at most 1000).
                 queue list: the most listed of each state (default 100, at most 1000).
                 recent list: the most listed; 0, the default, lists all
  -interval D    watch, adaptive watch: the time between screens (default 1s)
  -rows N        watch, adaptive watch: the most holders listed (default 15)
  -yes           lock break, queue drop, queue cancel: do it without asking
  -kind K        ls: only primitives of kind K: limiter, counter, lock, queue,
                 recent, packet, rate or adaptive
  -offset N      recent list: skip the N newest items; queue list: the first N
                 of each state
  -state S       queue list: ready, delayed, inflight, dead, or all (the default)
  -max-age D     recent list: leave out items older than D, as the list's
                 Config.MaxAge does; 0 lists them all; by default, the MaxAge
                 its Lists recorded, if any
  -prefix P      packet show: the Store's Config.Prefix (default redpacket)
  -shards N      packet show: the Store's Config.Shards (default 1)
  -rate N        rate show, rate reset: the limit's Rate, events per period,
                 in place of the limit recorded beside the key
  -period D      rate show, rate reset: its Period (default 1s)
  -burst N       rate show, rate reset: its Burst; 0, the default, means the rate
  -algorithm A   rate show, rate reset: gcra (the default) or fixed-window
  -listen ADDR   web: the address to serve on (default 127.0.0.1:8379); one
                 beyond loopback needs -allow-remote
  -allow-writes  web: offer writes, each carrying the token printed at start
  -allow-remote  web: allow -listen beyond loopback
  -min N, -max N adaptive show, adaptive watch: the Limiters' Config.Min and
                 Config.Max, in place of those they recorded: shown beside the
                 limit, which is then read as those Limiters read it, kept within them

Limits. A limiter records its limit beside its key once a minute while it is
used, and count, holders, release and watch read it there; -limit overrides
it. For a key with no record (one last used by an older release), the limit
is read from the full marker's name, which lives while the key is full, and
from each waiter's queue entry (slotlimit.Limits), which walks the keys of
the node that holds KEY; when the key is neither full nor waited on, the
limit is unknown, and shown as such. A key with no lease, no queue and no
record holds no limiter: count and holders say "no limiter at KEY". release
needs the limit only to end the full marker of that limit; when several are
found (a rolling change), it uses the highest. Waiters are handed units only
within their own limit, whatever it uses.

Fences. A lock's fence is the server's clock in microseconds when its owner
took it, and is not stored. lock info shows the fence floor: the server's
clock as it read the lock. The owner's fence is at most the floor, and every
owner that takes the lock later gets a higher one.

Adaptive limits. An adaptive limit is stored in Redis, so adaptive show and
adaptive watch read it (Limiter.Inspect, which writes nothing); its Limiters
record their Min and Max beside it, which the commands show, and read the
limit within; -min and -max override them.

Refusals. watch shows the calls refused without waiting that Limiters with
Config.CountRefusals counted in Redis (over a day); others count none.

Exit status:
  0  done; for a question, yes
  1  the answer is no: ls that found nothing; count or holders of a key that
     holds no limiter; watch whose last screen found no limiter; a command
     whose key holds another type, explained in words; release of a holder
     that held nothing; lock info of a
     free lock; lock break of a lock that is free, changed hands or lapsed
     before the break, or that you declined to break; any queue command on
     a key with no delay queue (an empty queue keeps nothing in Redis);
     queue requeue or drop of IDs none of which is a dead letter, or
     a drop you declined; queue cancel of IDs none of which is ready or
     delayed, or a cancel you declined; recent list or remove on a key with
     no list; recent remove of values none of which is in the list; packet show of a
     packet that does not exist; rate show of a key with no event allowed now;
     rate show or reset of a key with no rate limit;
     adaptive show of a key that holds no adaptive limit, and adaptive
     watch whose last screen found none
  2  usage: an unknown command or flag, a missing argument, a bad URL,
     or a key, holder or limit that the library refuses
  3  Redis is unreachable, or answered with an error;
     watch or adaptive watch whose last screen failed; web that could not
     listen or serve
`

// A command is one subcommand. Each package's commands live in a file of
// their own, named after the package (limiter.go, lock.go, queue.go,
// recent.go, packet.go, rate.go, adaptive.go), and are listed in commands,
// and in usage.
type command struct {
	name  string                     // as typed: "count", "lock info"
	args  []string                   // the names of its arguments, all required; a last name ending in "..." takes one or more, one in [] none or one
	flags func(*flag.FlagSet, *cli)  // its own flags, besides the common ones; nil for none
	run   func(*cli, []string) error // runs it with its arguments
}

// commands is every command, in the order usage lists them.
var commands = []command{
	{"ls", []string{"[PATTERN]"}, lsFlags, runLs},
	{"count", []string{"KEY"}, limitFlag, runCount},
	{"holders", []string{"KEY"}, limitFlag, runHolders},
	{"release", []string{"KEY", "HOLDER"}, limitFlag, runRelease},
	{"watch", []string{"KEY"}, watchFlags, runWatch},
	{"lock info", []string{"KEY"}, nil, runLockInfo},
	{"lock break", []string{"KEY"}, breakFlags, runLockBreak},
	{"queue stats", []string{"KEY"}, nil, runQueueStats},
	{"queue list", []string{"KEY"}, listFlags, runQueueList},
	{"queue dead", []string{"KEY"}, deadFlags, runQueueDead},
	{"queue cancel", []string{"KEY", "ID..."}, cancelFlags, runQueueCancel},
	{"queue requeue", []string{"KEY", "ID..."}, nil, runQueueRequeue},
	{"queue drop", []string{"KEY", "ID..."}, dropFlags, runQueueDrop},
	{"recent list", []string{"KEY"}, recentFlags, runRecentList},
	{"recent remove", []string{"KEY", "VALUE..."}, nil, runRecentRemove},
	{"packet show", []string{"ID"}, packetFlags, runPacketShow},
	{"rate show", []string{"KEY"}, rateFlags, runRateShow},
	{"rate reset", []string{"KEY"}, rateFlags, runRateReset},
	{"adaptive show", []string{"KEY"}, adaptiveFlags, runAdaptiveShow},
	{"adaptive watch", []string{"KEY"}, adaptiveWatchFlags, runAdaptiveWatch},
	{"web", nil, webFlags, runWeb},
}

// A cli is one run of the command: its flags, its streams, and the client.
type cli struct {
	// Common flags.
	url     string
	cluster bool
	json    bool
	timeout time.Duration

	// Command flags.
	limit     int64
	n         int
	interval  time.Duration
	rows      int
	yes       bool
	offset    int64
	maxAge    time.Duration
	maxAgeSet bool // -max-age was given
	state     string
	prefix    string
	shards    int
	rate      int64
	period    time.Duration
	burst     int64
	algorithm string
	minLimit  int64
	maxLimit  int64
	kind      string
	web       webConfig

	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool // stdout is a terminal: watch draws over its last screen
	client         redis.UniversalClient
	addr           string // the server's address, for screens (never the URL: it may hold a password)
}

func main() {
	// The client's own log lines (a failed dial, retried) would only
	// repeat the error that the command prints once.
	redis.SetLogger(quiet{})
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// quiet is a go-redis logger that logs nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// run runs the command line args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{url: os.Getenv("REDIS_URL"), timeout: 5 * time.Second, interval: time.Second, rows: 15,
		stdin: stdin, stdout: stdout, stderr: stderr, tty: isTerminal(stdout)}
	global := flag.NewFlagSet("slotlimit", flag.ContinueOnError)
	c.commonFlags(global, true)
	if err := parse(global, args); err != nil {
		return c.fail(err, nil)
	}
	cmd, rest, err := find(global.Args())
	if err != nil {
		return c.fail(err, nil)
	}
	fs := flag.NewFlagSet("slotlimit "+cmd.name, flag.ContinueOnError)
	c.commonFlags(fs, true)
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	cmdArgs, err := parseAnywhere(fs, rest)
	if err != nil {
		return c.fail(err, &cmd)
	}
	if c.timeout <= 0 {
		return c.fail(usageErrorf("-timeout %v: must be above 0", c.timeout), &cmd)
	}
	if cmd.name == "web" && c.json {
		return c.fail(usageErrorf("-json: web serves a page, and prints no JSON"), &cmd)
	}
	if !cmd.takes(len(cmdArgs)) {
		return c.fail(usageErrorf("%s takes %s; got %d argument(s)", cmd.name, cmd.argsText(), len(cmdArgs)), &cmd)
	}
	if err := c.connect(); err != nil {
		return c.fail(err, &cmd)
	}
	defer c.client.Close()
	err = cmd.run(c, cmdArgs)
	if kind := cmd.kind(); kind != "" && len(cmdArgs) > 0 {
		err = c.wrongType(err, kind, cmdArgs[0])
	}
	return c.fail(err, &cmd)
}

// kind returns what the command's first argument names, as "no KIND at
// KEY" and the words for a key of another type say it: "limiter" for
// count, holders, release and watch; "" for a command that takes no key.
func (cmd *command) kind() string {
	group, _, ok := strings.Cut(cmd.name, " ")
	if !ok {
		group = ""
	}
	switch group {
	case "":
		if cmd.name == "ls" || cmd.name == "web" {
			return ""
		}
		return "limiter"
	case "lock":
		return "lock"
	case "queue":
		return "delay queue"
	case "recent":
		return "recent list"
	case "packet":
		return "red packet"
	case "rate":
		return "rate limit"
	case "adaptive":
		return "adaptive limit"
	}
	return ""
}

// takes reports whether the command takes n arguments.
func (cmd *command) takes(n int) bool {
	if len(cmd.args) > 0 && strings.HasSuffix(cmd.args[len(cmd.args)-1], "...") {
		return n >= len(cmd.args)
	}
	if len(cmd.args) > 0 && strings.HasPrefix(cmd.args[len(cmd.args)-1], "[") {
		return n == len(cmd.args) || n == len(cmd.args)-1
	}
	return n == len(cmd.args)
}

// argsText names the command's arguments, as an error says what it takes.
func (cmd *command) argsText() string {
	if len(cmd.args) == 0 {
		return "no arguments"
	}
	return strings.Join(cmd.args, " ")
}

// isTerminal reports whether w is a terminal (a character device), on
// which watch may move the cursor.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// commonFlags defines the flags every command takes, before the command
// or after its name, on fs; -json only when json is true: web refuses it,
// and its help leaves it out.
func (c *cli) commonFlags(fs *flag.FlagSet, json bool) {
	fs.StringVar(&c.url, "u", c.url, "Redis `URL`: redis://[user:password@]host:port[/db], rediss://..., or host:port; default $REDIS_URL, or "+defaultAddr)
	fs.BoolVar(&c.cluster, "cluster", c.cluster, "the URL names a node of a Redis Cluster")
	if json {
		fs.BoolVar(&c.json, "json", c.json, "print JSON for scripts")
	}
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "the bound on each call to Redis")
}

func limitFlag(fs *flag.FlagSet, c *cli) {
	fs.Int64Var(&c.limit, "limit", 0, "the key's limit `N`; by default read from Redis (see slotlimit -h)")
}

// parse parses args with fs, printing nothing: run prints the errors
// and the help.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		if strings.HasPrefix(err.Error(), "flag provided but not defined: -") {
			return usageErrorf("%v (an argument that begins with '-' goes after --)", err)
		}
		return usageErrorf("%v", err)
	}
	return err
}

// parseAnywhere parses the flags in args with fs wherever they are, before
// the arguments, between them or after them, and returns the arguments in
// order. A word that begins with '-' is a flag, and a flag that takes a
// value takes the next word unless it has one after '='; "-" alone is an
// argument, and after "--" every word is one.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		flags = append(flags, arg)
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !isBool(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := parse(fs, flags); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 { // a flag's value that was "--"
		return nil, usageErrorf("unexpected %q among the flags", fs.Arg(0))
	}
	return positional, nil
}

// isBool reports whether f is a flag that takes no value, as -json.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// find returns the command that args begin with, and the rest of args.
func find(args []string) (command, []string, error) {
	if len(args) == 0 {
		return command{}, nil, usageErrorf("no command")
	}
	for _, cmd := range commands {
		words := strings.Fields(cmd.name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			return cmd, args[len(words):], nil
		}
	}
	var subs []string
	for _, cmd := range commands {
		if group, sub, ok := strings.Cut(cmd.name, " "); ok && group == args[0] {
			subs = append(subs, sub)
		}
	}
	if len(subs) > 0 {
		return command{}, nil, usageErrorf("%s takes a subcommand: %s", args[0], strings.Join(subs, ", "))
	}
	return command{}, nil, usageErrorf("unknown command %q", args[0])
}

// defaultAddr is the Redis the command talks to when neither -u nor
// REDIS_URL names one, as redis-cli does.
const defaultAddr = "localhost:6379"

// connect makes the client for the URL, without contacting Redis. A URL
// without a scheme, as host:port, is taken as redis://host:port; no URL
// at all, as defaultAddr.
func (c *cli) connect() error {
	if c.url == "" {
		c.url = defaultAddr
	}
	if !strings.Contains(c.url, "://") {
		c.url = "redis://" + c.url
	}
	if c.cluster {
		opts, err := redis.ParseClusterURL(c.url)
		if err != nil {
			return usageErrorf("-u: %v", err)
		}
		opts.ContextTimeoutEnabled = true
		c.client, c.addr = redis.NewClusterClient(opts), strings.Join(opts.Addrs, ",")
		return nil
	}
	opts, err := redis.ParseURL(c.url)
	if err != nil {
		return usageErrorf("-u: %v", err)
	}
	opts.ContextTimeoutEnabled = true
	c.client, c.addr = redis.NewClient(opts), opts.Addr
	return nil
}

// call returns the context of one call to Redis, bounded by -timeout.
func (c *cli) call() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.timeout)
}

// A usageError is bad usage: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// errNo ends a command whose answer is no, which it printed: exit code 1.
var errNo = errors.New("no")

// fail prints err, if it needs printing, and returns its exit code. cmd,
// if not nil, is the command that was run, for its usage line.
func (c *cli) fail(err error, cmd *command) int {
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		c.help(cmd)
		return exitOK
	case errors.Is(err, errNo):
		return exitNo
	case errors.As(err, &usage), isInvalid(err):
		fmt.Fprintln(c.stderr, failure(err, cmd))
		if cmd != nil {
			fmt.Fprintf(c.stderr, "usage: %s\n", cmd.usage())
		}
		fmt.Fprintln(c.stderr, "Run 'slotlimit -h' for the commands and flags.")
		return exitUsage
	}
	fmt.Fprintln(c.stderr, failure(err, cmd))
	return exitRedis
}

// isInvalid reports whether err is one of the library's errors for bad
// input, sent before anything reached Redis: a key, ID or limit that a
// package refuses.
func isInvalid(err error) bool {
	for _, target := range []error{
		slotlimit.ErrInvalidConfig, slotlimit.ErrInvalidArgument,
		lock.ErrInvalidConfig, lock.ErrInvalidArgument,
		delayqueue.ErrInvalidConfig, delayqueue.ErrInvalidArgument,
		recent.ErrInvalidConfig, recent.ErrInvalidArgument,
		redpacket.ErrInvalidConfig, redpacket.ErrInvalidArgument,
		ratelimit.ErrInvalidConfig, ratelimit.ErrInvalidArgument,
		adaptive.ErrInvalidConfig, adaptive.ErrInvalidArgument,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// failure is the line that reports err: the command that failed, then
// err, whose text names the library's package once, as `slotlimit
// release: invalid config: ...`, `slotlimit count: count "k": WRONGTYPE
// ...` or `slotlimit lock info: lock: inspect "k": ...`. cmd is nil when
// no command was found.
func failure(err error, cmd *command) string {
	name := "slotlimit"
	if cmd != nil {
		name += " " + cmd.name
	}
	// Package slotlimit's errors begin with its name, which is the
	// command's too.
	return name + ": " + strings.TrimPrefix(err.Error(), "slotlimit: ")
}

// usage returns the command's usage line.
func (cmd *command) usage() string {
	return strings.TrimSuffix("slotlimit [flags] "+cmd.name+" [flags] "+strings.Join(cmd.args, " "), " ")
}

// help prints slotlimit -h, or a command's -h.
func (c *cli) help(cmd *command) {
	if cmd == nil {
		fmt.Fprint(c.stdout, usage)
		return
	}
	fmt.Fprintf(c.stdout, "usage: %s\n\nflags:\n", cmd.usage())
	c.url = "" // its default is $REDIS_URL, which may hold a password
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	c.commonFlags(fs, cmd.name != "web")
	if cmd.flags != nil {
		cmd.flags(fs, c)
	}
	fs.SetOutput(c.stdout)
	fs.PrintDefaults()
	fmt.Fprintln(c.stdout, "\nRun 'slotlimit -h' for every command and the exit codes.")
}
