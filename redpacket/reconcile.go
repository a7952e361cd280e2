package redpacket

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// A Reconciliation compares a packet's claims in Redis with its rows in
// the database. Once a persister has written the packet's log, the two
// agree: OK reports true.
type Reconciliation struct {
	PacketID string  // the packet compared
	Claims   int     // claims in Redis
	Rows     int     // rows in the database
	Missing  []Claim // in Redis, not in the database
	Extra    []Claim // in the database, not in Redis
	Differ   []Claim // in both, but the row says otherwise (the row is given)
}

// OK reports whether Redis and the database agree.
func (r Reconciliation) OK() bool {
	return len(r.Missing) == 0 && len(r.Extra) == 0 && len(r.Differ) == 0
}

// Reconcile compares the claims of a packet in Redis with its rows in the
// database, each list sorted by Seq; claims taken while it runs may show
// as Missing. It returns ErrNotFound when Redis has no such packet (never
// created, or lapsed). It only reads, so it may be called again after any
// error.
func (p *Persister) Reconcile(ctx context.Context, packetID string) (Reconciliation, error) {
	if err := errs.Check(ctx, p.usable(), "Reconcile", name(packetID)); err != nil {
		return Reconciliation{}, err
	}
	snap, err := p.store.snapshot(ctx, "Reconcile", packetID)
	if err != nil {
		return Reconciliation{}, err
	}
	inRedis := make(map[string]Claim, len(snap.Claims))
	for _, c := range snap.Claims {
		inRedis[c.User] = c
	}
	rows, err := p.cfg.DB.QueryContext(ctx, selectClaims+p.cfg.Dialect.placeholder(1), packetID)
	if err != nil {
		return Reconciliation{}, refused("Reconcile", packetID, fmt.Errorf("database: %w", err))
	}
	defer rows.Close()
	r := Reconciliation{PacketID: packetID, Claims: len(inRedis)}
	for rows.Next() {
		var c Claim
		var at int64
		if err := rows.Scan(&c.User, &c.Amount, &c.Seq, &at); err != nil {
			return Reconciliation{}, refused("Reconcile", packetID, fmt.Errorf("database: %w", err))
		}
		c.PacketID, c.At = packetID, time.UnixMilli(at)
		r.Rows++
		want, ok := inRedis[c.User]
		switch {
		case !ok:
			r.Extra = append(r.Extra, c)
		case want.Amount != c.Amount || want.Seq != c.Seq || !want.At.Equal(c.At):
			r.Differ = append(r.Differ, c)
			delete(inRedis, c.User)
		default:
			delete(inRedis, c.User)
		}
	}
	if err := rows.Err(); err != nil {
		return Reconciliation{}, refused("Reconcile", packetID, fmt.Errorf("database: %w", err))
	}
	for _, c := range inRedis {
		r.Missing = append(r.Missing, c)
	}
	for _, list := range [][]Claim{r.Missing, r.Extra, r.Differ} {
		sort.Slice(list, func(i, j int) bool { return list[i].Seq < list[j].Seq })
	}
	return r, nil
}
