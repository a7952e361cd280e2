package redpacket

import (
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	"github.com/slotlimit/slotlimit/observe"
)

// Defaults for a Config that leaves a field zero.
const (
	DefaultPrefix = "redpacket"
	DefaultLinger = 24 * time.Hour
)

// Config describes where a Store keeps its packets. The zero Config is
// the default: prefix "redpacket", one shard, a day's linger. Every
// process that shares packets must use the same Config.
type Config struct {
	// Prefix starts every key's hash tag: the keys of shard n, and of the
	// packets in it, begin "{Prefix:n}:redpacket:", the package's name,
	// as "{redpacket:0}:redpacket:p:p1" (the packet p1),
	// "{redpacket:0}:redpacket:s:p1" (its shares),
	// "{redpacket:0}:redpacket:log" and "{redpacket:0}:redpacket:due". The
	// other packages of this module refuse such a key as a key of their
	// own, so none of them reads or changes a Store's data, whatever the
	// Prefix. It must not hold '{' or '}'. Default DefaultPrefix.
	Prefix string

	// Shards spreads packets over this many hash slots, each with its own
	// claim log (a stream) for the persister to read. A packet's shard is
	// a hash of its id. One shard puts every packet in one slot, which
	// suits a single server; on a Cluster, a few per node spread the load.
	// Between 1 and 1024; 0 means 1.
	Shards int

	// Linger is how long a packet's keys outlive its TTL: a user who
	// claimed still gets the claim back from Grab, Remaining still
	// answers, and a persister has this long to log the unclaimed shares
	// for refund. 0 means DefaultLinger; at least a second.
	Linger time.Duration

	// Replicas, when above 0, makes Create, Grab and the persister's
	// expiry wait until that many replicas have the write (Redis WAIT),
	// so that a claim once returned survives a failover to one of them;
	// and a persister commits only log entries the replicas have.
	// A write they do not acknowledge in time fails with an error that
	// wraps ErrNotReplicated, and one whose WAIT a failover cut short with
	// an error matching ErrOutcomeUnknown. 0, the default, leaves
	// replication asynchronous: an operator's CLUSTER FAILOVER loses
	// nothing, since the replica catches up first, but a forced takeover
	// can lose the last writes the old master acknowledged, a claim among
	// them.
	Replicas int

	// ReplicaTimeout bounds the wait for Replicas, in whole milliseconds:
	// 0 means one second; between 0 and 1ms it is refused.
	ReplicaTimeout time.Duration

	// DisableCoalescing sends each Grab to Redis as its own script call.
	// By default, concurrent Grabs of one packet, made through the same
	// Store, share one script call, which takes their shares in one step
	// and logs their claims in one log entry; each caller gets its own
	// Claim or error and its own Observer event, as it would alone.
	DisableCoalescing bool

	// Observer, if set, is told of each call's outcome, as one final
	// event with Package "redpacket" and Key the packet id:
	//   - Create: Done, with Units and Limit the packet's Count;
	//   - Grab: Acquired, with Holder the user, Units 1 (one share; the
	//     amount is the Claim's) and InUse the claim's Seq, the shares
	//     taken once it was; or Refused, InUse -1, when the packet is
	//     sold out or expired;
	//   - a Persister's batch, from Run or Drain: Done, with Key the
	//     shard's log, Holder the consumer and Units the log entries
	//     written and acked;
	//   - and Error, with Err, for any other error of these calls.
	// Reads (Remaining, Inspect, Pending, Reconcile) report nothing. A nil
	// Observer costs nothing.
	Observer observe.Observer
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	return c
}

// check validates c's fields that New's kernel does not, with its
// defaults set.
func (c Config) check() error {
	switch {
	case strings.ContainsAny(c.Prefix, "{}"):
		return errs.Config("Prefix %q holds a brace", c.Prefix)
	case c.Shards < 1 || c.Shards > 1024:
		return errs.Config("Shards is %d, must be 1 to 1024", c.Shards)
	case c.Linger < time.Second:
		return errs.Config("Linger is %v, must be at least 1s", c.Linger)
	}
	return nil
}

// A shard is the hash tag of the keys of the packets it holds, and of its
// log and due set.
type shard string

// shard returns the shard of packet id.
func (c Config) shard(id string) shard {
	n := 0
	if c.Shards > 1 {
		n = int(crc32.ChecksumIEEE([]byte(id)) % uint32(c.Shards))
	}
	return c.shardN(n)
}

// shardN returns shard n.
func (c Config) shardN(n int) shard {
	return shard("{" + c.Prefix + ":" + strconv.Itoa(n) + "}")
}

// Each key of a shard is its tag, the package's name and a suffix; see
// scripts/lib.lua.
func (s shard) packet(id string) string { return string(s) + ":redpacket:p:" + id }
func (s shard) shares(id string) string { return string(s) + ":redpacket:s:" + id }
func (s shard) log() string             { return string(s) + ":redpacket:log" }
func (s shard) due() string             { return string(s) + ":redpacket:due" }
func (s shard) sync() string            { return string(s) + ":redpacket:sync" }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
