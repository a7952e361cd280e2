package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/classic"
	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/bench/internal/packetload"
	"github.com/slotlimit/slotlimit/redpacket"
)

// seedGrab is the classic grab script, verbatim, line by line, its
// trailing spaces kept. It makes its key names from KEYS[1], the packet
// id: red_packet_<id>, a hash whose field stock counts the shares left,
// and red_packet_list_<id>, a list to which it pushes ARGV[1],
// "userId-timeMillis". It returns 1 for a share taken, 2 for the last
// one, and 0 when the packet is sold out.
const seedGrab = classic.Grab

// Names of the grabbers, in the order of the report.
const (
	nameSeed  = "the classic script, verbatim, EVALSHA"
	nameStore = "slotlimit redpacket Store.Grab"
)

// shareAmount is every share's amount, in cents: the Store's packets are
// split Equal, as the classic unit_amount is.
const shareAmount = packetload.ShareAmount

// A grabber is one way of keeping red packets and grabbing their shares.
type grabber struct {
	name     string
	tag      string   // in its keys
	commands []string // its grab's top-level commands, as INFO commandstats names them
	// on returns the grabber's packets whose keys all hold tag.
	on func(tag string) (packets, error)
}

// packets are the red packets of one grabber in one phase.
type packets = packetload.Packets

// user returns the j-th user of a phase: ten digits, as the classic user
// ids are numbers, and the same for every grabber.
var user = packetload.User

// holder is the user who takes the one share of a sold-out packet.
const holder = "42"

func (b *bench) seedGrabber() *grabber {
	return &grabber{name: nameSeed, tag: "seed", commands: []string{"evalsha"}, on: func(tag string) (packets, error) {
		return packetload.Classic{C: b.Client, SHA: b.seed.SHA, Tag: tag}, nil
	}}
}

func (b *bench) storeGrabber() *grabber {
	return &grabber{name: nameStore, tag: "store", commands: []string{"evalsha"}, on: func(tag string) (packets, error) {
		s, err := redpacket.New(b.Client, redpacket.Config{Prefix: tag})
		return packetload.Store{S: s}, err
	}}
}

// runGrabs runs each grabber's phase of grabs that take a share, then
// each one's phase of grabs refused, in b.Rounds rounds, the grabbers
// taking turns in every round, so that a drift in the machine's speed
// falls on all of them alike. A phase whose top-level commands are not
// the grabber's ends the run (see harness.Phase.CheckCommands).
func (b *bench) runGrabs(ctx context.Context) error {
	b.taken = make([]harness.CallResult, len(b.grabbers))
	b.refused = make([]harness.CallResult, len(b.grabbers))
	for i, g := range b.grabbers {
		b.taken[i] = harness.CallResult{Name: g.name, Commands: g.commands, Latency: harness.NewTimings(b.Workers)}
		b.refused[i] = harness.CallResult{Name: g.name, Commands: g.commands, Latency: harness.NewTimings(b.Workers)}
	}
	for round := range b.Rounds {
		for _, phase := range []struct {
			name    string
			run     func(ctx context.Context, g *grabber, tag string, r *harness.CallResult) error
			results []harness.CallResult
		}{{"take", b.takePhase, b.taken}, {"refuse", b.refusePhase, b.refused}} {
			for i, g := range b.grabbers {
				tag := b.Key(fmt.Sprintf("%s:%s:%d:", phase.name, g.tag, round))
				err := phase.run(ctx, g, tag, &phase.results[i])
				if err == nil {
					err = b.deleteMatching(ctx, tag)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", g.name, err)
				}
			}
		}
	}
	return nil
}

// takePhase creates b.packets packets of b.shares shares with g, their
// keys holding tag, then grabs them, in order, each grab by a user of its
// own, until every share is taken or the phase's time or -max-ops ends
// it, and adds the phase to r. It fails if a grab is refused, or if the
// shares taken are not the grabs that succeeded.
func (b *bench) takePhase(ctx context.Context, g *grabber, tag string, r *harness.CallResult) error {
	ps, err := g.on(tag)
	if err != nil {
		return err
	}
	ids := make([]string, b.packets)
	for k := range ids {
		ids[k] = "p" + strconv.Itoa(k)
		if err := ps.Create(ctx, ids[k], b.shares); err != nil {
			return err
		}
	}
	shares := int64(b.shares)
	bounds := harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: min(b.MaxOps, int64(b.packets)*shares)}
	var next atomic.Int64
	ph, err := b.MeasureDrive(ctx, bounds, func(ctx context.Context, w int) error {
		j := next.Add(1) - 1
		id := ids[j/shares]
		t0 := time.Now()
		took, err := ps.Grab(ctx, id, user(j))
		if err != nil {
			return err
		}
		if !took {
			return fmt.Errorf("packet %s: grab %d of %d found it sold out", id, j%shares+1, shares)
		}
		r.Latency.Add(w, time.Since(t0))
		return nil
	})
	if err == nil {
		err = ph.CheckCommands(g.commands)
	}
	if err != nil {
		return err
	}
	var taken int64
	for _, id := range ids {
		n, err := ps.Taken(ctx, id, b.shares)
		if err != nil {
			return err
		}
		taken += n
	}
	if taken != ph.Ops {
		return fmt.Errorf("%d grabs took a share, but the packets gave %d", ph.Ops, taken)
	}
	r.Phase = r.Phase.Add(ph)
	return nil
}

// refusePhase makes a sold-out packet with g, its keys holding tag, then
// grabs it, each grab by a user of its own, until the phase's time or
// -max-ops ends it, and adds the phase to r. It fails if a grab takes a
// share.
func (b *bench) refusePhase(ctx context.Context, g *grabber, tag string, r *harness.CallResult) error {
	ps, err := b.soldOut(ctx, g, tag)
	if err != nil {
		return err
	}
	var next atomic.Int64
	ph, err := b.MeasureDrive(ctx, b.Bounds(b.Workers), func(ctx context.Context, w int) error {
		t0 := time.Now()
		took, err := ps.Grab(ctx, soldOutID, user(next.Add(1)-1))
		if err != nil {
			return err
		}
		if took {
			return fmt.Errorf("packet %s: a grab took a share of it, sold out", soldOutID)
		}
		r.Latency.Add(w, time.Since(t0))
		return nil
	})
	if err == nil {
		err = ph.CheckCommands(g.commands)
	}
	if err != nil {
		return err
	}
	if n, err := ps.Taken(ctx, soldOutID, 1); err != nil || n != 1 {
		return errors.Join(err, fmt.Errorf("packet %s: %d shares taken of 1", soldOutID, n))
	}
	r.Phase = r.Phase.Add(ph)
	return nil
}

// soldOutID is the id of the sold-out packet of a phase of refusals.
const soldOutID = "sold-out"

// soldOut creates, with g, a packet of one share, which holder takes,
// checks that another user's grab is refused, and returns g's packets.
// It also puts g's scripts in the server's cache.
func (b *bench) soldOut(ctx context.Context, g *grabber, tag string) (packets, error) {
	ps, err := g.on(tag)
	if err != nil {
		return nil, err
	}
	if err := ps.Create(ctx, soldOutID, 1); err != nil {
		return nil, err
	}
	for i, who := range []string{holder, user(0)} {
		took, err := ps.Grab(ctx, soldOutID, who)
		if err != nil {
			return nil, err
		}
		if took != (i == 0) {
			return nil, fmt.Errorf("packet %s of one share: grab %d by %s: took %v", soldOutID, i+1, who, took)
		}
	}
	return ps, nil
}

// deleteMatching deletes every key that holds tag.
func (b *bench) deleteMatching(ctx context.Context, tag string) error {
	var keys []string
	iter := b.Admin.Scan(ctx, 0, "*"+tag+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	return b.Del(ctx, keys...)
}
