package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/redpacket"
)

// The command of package redpacket: packet show.

func packetFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.prefix, "prefix", redpacket.DefaultPrefix, "the Store's Config.Prefix `P`, which its keys begin with")
	fs.IntVar(&c.shards, "shards", 1, "the Store's Config.Shards `N`, which a packet's keys depend on")
}

// readPacket reads packet id of the Store with prefix and shards, at one
// moment, with Store.Inspect, which writes nothing: packet show, ls and
// the page show what it returns. A packet that does not exist is
// redpacket.ErrNotFound.
func readPacket(ctx context.Context, client redis.UniversalClient, prefix string, shards int, id string) (redpacket.Snapshot, error) {
	s, err := redpacket.New(client, redpacket.Config{Prefix: prefix, Shards: shards})
	if err != nil {
		return redpacket.Snapshot{}, err
	}
	return s.Inspect(ctx, id)
}

type packetJSON struct {
	ID         string      `json:"id"`
	Found      bool        `json:"found"`
	Total      int64       `json:"total"`
	Count      int         `json:"count"`
	Split      string      `json:"split"`
	CreatedAt  time.Time   `json:"created_at"`
	ExpiresAt  time.Time   `json:"expires_at"`
	ExpiredAt  *time.Time  `json:"expired_at"` // null until a persister expires it
	SharesLeft int         `json:"shares_left"`
	AmountLeft int64       `json:"amount_left"`
	Claims     []claimJSON `json:"claims"`
}

type claimJSON struct {
	Seq    int       `json:"seq"`
	User   string    `json:"user"`
	Amount int64     `json:"amount"`
	At     time.Time `json:"at"`
}

// runPacketShow prints a packet as created, the shares and amount left,
// and the claims taken, in the order taken, read at one moment by
// readPacket. A packet that does not exist is the answer no: "no red
// packet at ID", and where it was looked for.
func runPacketShow(c *cli, args []string) error {
	id := args[0]
	ctx, cancel := c.call()
	defer cancel()
	snap, err := readPacket(ctx, c.client, c.prefix, c.shards, id)
	if errors.Is(err, redpacket.ErrNotFound) {
		if c.json {
			if err := c.writeJSON(map[string]any{"id": id, "found": false}); err != nil {
				return err
			}
		}
		err := c.none(kindPacket, id)
		fmt.Fprintf(c.stderr, "(looked under prefix %q and %s: never created, its keys lapsed, or its Store has another -prefix or -shards)\n",
			c.prefix, plural(c.shards, "shard"))
		return err
	}
	if err != nil {
		return err
	}
	if c.json {
		out := packetJSON{
			ID: id, Found: true, Total: snap.Packet.Total, Count: snap.Packet.Count, Split: snap.Packet.Split.String(),
			CreatedAt: snap.CreatedAt.UTC(), ExpiresAt: snap.ExpiresAt.UTC(),
			SharesLeft: snap.SharesLeft, AmountLeft: snap.AmountLeft, Claims: []claimJSON{},
		}
		if !snap.ExpiredAt.IsZero() {
			at := snap.ExpiredAt.UTC()
			out.ExpiredAt = &at
		}
		for _, cl := range snap.Claims {
			out.Claims = append(out.Claims, claimJSON{Seq: cl.Seq, User: cl.User, Amount: cl.Amount, At: cl.At.UTC()})
		}
		return c.writeJSON(out)
	}
	t := newTable(c.stdout, "PACKET", display(id))
	t.row("split", snap.Packet.Split)
	t.row("shares left", fmt.Sprintf("%d of %d", snap.SharesLeft, snap.Packet.Count))
	t.row("amount left", fmt.Sprintf("%d of %d", snap.AmountLeft, snap.Packet.Total))
	t.row("created", snap.CreatedAt.UTC().Format(clockFormat))
	t.row("expires", snap.ExpiresAt.UTC().Format(clockFormat)+fmt.Sprintf(" (TTL %v)", snap.Packet.TTL))
	if !snap.ExpiredAt.IsZero() {
		t.row("expired", snap.ExpiredAt.UTC().Format(clockFormat)+fmt.Sprintf(": %d unclaimed shares, %d, logged for refund", snap.SharesLeft, snap.AmountLeft))
	}
	t.flush()
	if len(snap.Claims) == 0 {
		fmt.Fprintln(c.stdout, "\nno claims")
		return nil
	}
	fmt.Fprintln(c.stdout)
	ct := newTable(c.stdout, "SEQ", "USER", "AMOUNT", "AT (SERVER CLOCK)")
	for _, cl := range snap.Claims {
		ct.row(cl.Seq, display(cl.User), cl.Amount, cl.At.UTC().Format(clockFormat))
	}
	ct.flush()
	return nil
}
