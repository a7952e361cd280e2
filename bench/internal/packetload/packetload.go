// Package packetload is the red packets' load that packetbench and
// costbench both run: the classic packets, kept and grabbed as the classic
// script keeps and grabs them, and a redpacket Store's, behind one
// interface, and the users who grab them.
package packetload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/redpacket"
)

// ShareAmount is every share's amount, in cents: the Store's packets are
// split Equal, as the classic unit_amount is.
const ShareAmount = 100

// Packets are the red packets of one grabber in one phase.
type Packets interface {
	// Create creates packet id of shares shares.
	Create(ctx context.Context, id string, shares int) error
	// Grab grabs a share of packet id for user: took is false when it
	// was refused because the packet is sold out, and any other refusal
	// is an error.
	Grab(ctx context.Context, id, user string) (took bool, err error)
	// Taken returns the shares of packet id, created with shares, that
	// have been taken, once it has checked that the packet's keys agree.
	Taken(ctx context.Context, id string, shares int) (int64, error)
}

// User returns the j-th user of a phase: ten digits, as the classic user
// ids are numbers, and the same for every grabber.
func User(j int64) string {
	return strconv.FormatInt(1_000_000_000+j, 10)
}

// Classic are the classic packets on C, grabbed by the classic grab
// script whose SHA1 is SHA, their ids beginning with Tag.
type Classic struct {
	C   *redis.Client
	SHA string
	Tag string
}

func (p Classic) keys(id string) (packet, list string) {
	return "red_packet_" + p.Tag + id, "red_packet_list_" + p.Tag + id
}

// Create stores a packet as the classic script does: its stock, and its
// unit amount in yuan.
func (p Classic) Create(ctx context.Context, id string, shares int) error {
	packet, _ := p.keys(id)
	return p.C.HSet(ctx, packet, "stock", shares, "unit_amount", "1.00").Err()
}

// Grab runs the classic script for user, with the argument it takes,
// "userId-timeMillis".
func (p Classic) Grab(ctx context.Context, id, user string) (bool, error) {
	arg := user + "-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	n, err := p.C.EvalSha(ctx, p.SHA, []string{p.Tag + id}, arg).Int64()
	switch {
	case err != nil:
		return false, err
	case n == 1 || n == 2:
		return true, nil
	case n == 0:
		return false, nil
	}
	return false, fmt.Errorf("classic script replied %d", n)
}

// Taken implements Packets.
func (p Classic) Taken(ctx context.Context, id string, shares int) (int64, error) {
	packet, list := p.keys(id)
	stock, err := p.C.HGet(ctx, packet, "stock").Int64()
	if err != nil {
		return 0, err
	}
	pushed, err := p.C.LLen(ctx, list).Result()
	if err != nil {
		return 0, err
	}
	if taken := int64(shares) - stock; pushed != taken {
		return 0, fmt.Errorf("packet %s: stock %d of %d, but %d users in its list", id, stock, shares, pushed)
	}
	return pushed, nil
}

// Store are a Store's packets, split Equal in shares of ShareAmount.
type Store struct{ S *redpacket.Store }

// Create implements Packets.
func (p Store) Create(ctx context.Context, id string, shares int) error {
	return p.S.Create(ctx, redpacket.Packet{ID: id, Total: ShareAmount * int64(shares), Count: shares, Split: redpacket.Equal})
}

// Grab implements Packets; a claim other than the user's share of
// ShareAmount is an error.
func (p Store) Grab(ctx context.Context, id, user string) (bool, error) {
	c, err := p.S.Grab(ctx, id, user)
	switch {
	case errors.Is(err, redpacket.ErrSoldOut):
		return false, nil
	case err != nil:
		return false, err
	case c.Amount != ShareAmount || c.User != user:
		return false, fmt.Errorf("packet %s: user %s got %+v", id, user, c)
	}
	return true, nil
}

// Taken implements Packets.
func (p Store) Taken(ctx context.Context, id string, shares int) (int64, error) {
	left, amount, err := p.S.Remaining(ctx, id)
	if err != nil {
		return 0, err
	}
	if amount != ShareAmount*int64(left) {
		return 0, fmt.Errorf("packet %s: %d shares left of %d, worth %d", id, left, shares, amount)
	}
	return int64(shares - left), nil
}
