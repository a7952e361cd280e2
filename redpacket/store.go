package redpacket

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/callerr"
	"github.com/slotlimit/slotlimit/internal/coalesce"
	"github.com/slotlimit/slotlimit/internal/kernel"
)

// A Claim is one user's share of a packet.
type Claim struct {
	PacketID string    // the packet's ID, as given to Create
	User     string    // the user who took the share, as given to Grab
	Amount   int64     // the share, in the packet's unit (cents); at least 1
	Seq      int       // 1 for the first share taken
	At       time.Time // server clock
}

// A Store creates packets and hands out their shares, in Redis, for every
// process that uses the same servers and Config. Each call is one script
// or one read, which happens whole or not at all (concurrent Grabs of one
// packet share one script; see Config.DisableCoalescing); every share
// taken is logged, by the same script, for a Persister to copy into a
// database.
//
// A Store is safe for concurrent use. A zero or nil Store, one not made by
// New, returns ErrInvalidConfig from every method.
type Store struct {
	base   kernel.Base
	cfg    Config
	linger string // Linger in ms, as create.lua takes it

	// grabs sends concurrent Grabs of one packet as one script call, or
	// each alone with cfg.DisableCoalescing.
	grabs coalesce.Group[string, string, grabbed]
}

// maxGrabs is the most Grabs of one packet that share a script call: a
// batch of 64 holds Redis for about 150µs (BenchmarkGrabCrowd with 256
// grabbers, whose batches are full).
const maxGrabs = 64

// New returns a Store for cfg; the zero Config is valid (see Config). It
// returns an error matching ErrInvalidConfig, naming the field, for a nil
// client (untyped, or a typed nil such as a nil *redis.Client) or a cfg
// that cannot work. It does not contact Redis.
func New(client redis.UniversalClient, cfg Config) (*Store, error) {
	s, err := newStore(client, cfg)
	if err != nil {
		return nil, keyless("New", err)
	}
	return s, nil
}

// newStore is New, its errors naming no method.
func newStore(client redis.UniversalClient, cfg Config) (*Store, error) {
	base, err := errs.New(client, kernel.Settings{
		Replicas: cfg.Replicas, ReplicaTimeout: cfg.ReplicaTimeout, Observer: cfg.Observer,
	})
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.ReplicaTimeout = base.ReplicaTimeout
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Store{base: base, cfg: cfg, linger: ms(cfg.Linger)}
	s.grabs.Send, s.grabs.Max, s.grabs.Alone = s.runGrabs, maxGrabs, cfg.DisableCoalescing
	return s, nil
}

// Config returns the Store's configuration, defaults filled in; the zero
// Config for a Store that cannot be used.
func (s *Store) Config() Config {
	if !s.usable() {
		return Config{}
	}
	return s.cfg
}

// usable reports whether New made s.
func (s *Store) usable() bool { return s != nil && s.base.Usable() }

// Create stores p with its shares, cut up front (see Split), for Grab to
// hand out until p.TTL has passed on the server's clock, and returns nil.
// It returns ErrExists, with nothing written, when another packet has p.ID
// (until its keys lapse), and an error matching ErrInvalidPacket or
// ErrInvalidArgument, with nothing sent, for a p that breaks Packet's
// rules or a nil ctx.
//
// Create sent again with the same Packet, as after an error matching
// ErrOutcomeUnknown or wrapping ErrNotReplicated, returns nil and stores
// nothing more: a packet is named by its ID, so never reuse one, even
// after its keys lapse.
func (s *Store) Create(ctx context.Context, p Packet) error {
	if err := errs.Check(ctx, s.usable(), "Create", name(p.ID)); err != nil {
		return err
	}
	c := s.base.Begin("Create", p.ID, "", int64(p.Count), int64(p.Count))
	err := s.create(ctx, p)
	if err != nil {
		c.Failed(ctx, err)
	} else {
		c.Done(ctx)
	}
	return err
}

// create is Create for a usable s and a non-nil ctx.
func (s *Store) create(ctx context.Context, p Packet) error {
	if err := p.check(); err != nil {
		return refused("Create", p.ID, err)
	}
	created, err := s.runCreate(ctx, p)
	if err != nil {
		return s.fail(ctx, "Create", p.ID, err)
	}
	if !created {
		return refused("Create", p.ID, ErrExists)
	}
	return nil
}

// Grab gives user the next share of the packet and returns it; a user's
// later grabs return the same Claim. No share is given twice, nor more
// than Count. It returns ErrSoldOut when every share is taken, ErrExpired
// when shares are left but the TTL has passed, and ErrNotFound when there
// is no such packet, with nothing written; and an error matching
// ErrInvalidArgument, with nothing sent, for a packet id or user that
// breaks MaxIDLen's rules, or a nil ctx.
//
// Grab sent again, as after an error matching ErrOutcomeUnknown or
// wrapping ErrNotReplicated, returns the claim the first call took, if
// the master kept it.
//
// Grabs of one packet made through s while one is in flight queue, and
// go together in one script call when it returns; each returns what it
// would have returned alone, in turn. One whose ctx ends while it is
// queued returns an error matching ctx.Err(), having sent nothing; one
// whose ctx ends in flight returns, as a Grab alone does, an error
// matching ctx.Err() and ErrOutcomeUnknown, or its answer if it came
// first.
func (s *Store) Grab(ctx context.Context, packetID, user string) (Claim, error) {
	if err := errs.Check(ctx, s.usable(), "Grab", name(packetID)); err != nil {
		return Claim{}, err
	}
	c := s.base.Begin("Grab", packetID, user, 1, 0)
	claim, err := s.grab(ctx, packetID, user)
	switch {
	case !c.On():
	case err == nil:
		c.Acquired(ctx, int64(claim.Seq))
	case errors.Is(err, ErrSoldOut) || errors.Is(err, ErrExpired):
		c.Refused(ctx, -1)
	default:
		c.Failed(ctx, err)
	}
	return claim, err
}

// grab is Grab for a usable s and a non-nil ctx.
func (s *Store) grab(ctx context.Context, packetID, user string) (Claim, error) {
	if err := checkID("packet id", packetID); err != nil {
		return Claim{}, refused("Grab", packetID, err)
	}
	if err := checkID("user", user); err != nil {
		return Claim{}, refused("Grab", packetID, err)
	}
	g, err := s.grabs.Do(ctx, packetID, user)
	switch {
	case g.refusal != nil:
		return Claim{}, refused("Grab", packetID, g.refusal)
	case err != nil:
		return Claim{}, s.fail(ctx, "Grab", packetID, err)
	}
	return g.claim, nil
}

// Remaining returns the shares of the packet not yet taken, and their sum:
// once it has expired, what is left to refund. It returns ErrNotFound
// when there is no such packet. It only reads, so it may be called again
// after any error.
func (s *Store) Remaining(ctx context.Context, packetID string) (shares int, amount int64, err error) {
	if err := errs.Check(ctx, s.usable(), "Remaining", name(packetID)); err != nil {
		return 0, 0, err
	}
	if err := checkID("packet id", packetID); err != nil {
		return 0, 0, refused("Remaining", packetID, err)
	}
	key := s.cfg.shard(packetID).packet(packetID)
	vals, err := s.base.Client.HMGet(ctx, key, "left", "left_amount").Result()
	if err != nil {
		return 0, 0, s.fail(ctx, "Remaining", packetID, err)
	}
	if vals[0] == nil {
		return 0, 0, refused("Remaining", packetID, ErrNotFound)
	}
	left, err1 := strconv.Atoi(asString(vals[0]))
	sum, err2 := strconv.ParseInt(asString(vals[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, s.fail(ctx, "Remaining", packetID, callerr.UnexpectedReply(vals))
	}
	return left, sum, nil
}

// fail returns the error of a call of method, given by its Go name, on
// packet id that was sent with ctx.
func (s *Store) fail(ctx context.Context, method, id string, err error) error {
	return errs.Call(ctx, method, name(id), err)
}

// refused returns err, known before anything is sent or a refusal, as the
// error of method on packet id: `redpacket: grab "p1": sold out`. It
// matches err. It is errs.Op with the method's words made once, so that a
// refused Grab allocates no more than it must.
func refused(method, id string, err error) error {
	w, ok := methodWords[method]
	if !ok {
		w = kernel.Words(method)
	}
	return callerr.Op(errs.Package(), w, name(id), err)
}

// methodWords holds the words of the methods that name a packet id.
var methodWords = map[string]string{
	"Create": kernel.Words("Create"), "Grab": kernel.Words("Grab"),
	"Remaining": kernel.Words("Remaining"), "Inspect": kernel.Words("Inspect"),
	"Reconcile": kernel.Words("Reconcile"),
}

// name is id as an error names it: whole, unless it is too long to be an
// id, when its first 64 bytes stand for it.
func name(id string) string {
	if len(id) > MaxIDLen {
		return id[:64] + "..."
	}
	return id
}

// checkID refuses an empty or over-long packet id or user, and one that
// a database's text column would refuse.
func checkID(what, id string) error {
	if !validID(id) {
		return errs.Argument("%s %q: must be 1 to %d bytes of UTF-8, with no NUL", what, name(id), MaxIDLen)
	}
	return nil
}

// validID reports whether id can name a packet or a user: 1 to MaxIDLen
// bytes of valid UTF-8 with no NUL, as PostgreSQL's text takes.
func validID(id string) bool {
	return id != "" && len(id) <= MaxIDLen && utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}

// parseClaim decodes a claim as the scripts store it, "amount:seq:at".
func parseClaim(packetID, user, s string) (Claim, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Claim{}, false
	}
	amount, err1 := strconv.ParseInt(parts[0], 10, 64)
	seq, err2 := strconv.Atoi(parts[1])
	at, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Claim{}, false
	}
	return Claim{PacketID: packetID, User: user, Amount: amount, Seq: seq, At: time.UnixMilli(at)}, true
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// ms is d in whole milliseconds, as the scripts take it.
func ms(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}
