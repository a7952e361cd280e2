package redpacket

import (
	"context"
	"database/sql"
)

// commit writes entries in one transaction: the packets first, each once,
// then the claims, each once. Every statement is idempotent, so a batch
// written again, whole or in part, leaves the same rows.
func (p *Persister) commit(ctx context.Context, entries []entry) error {
	var packets []packetRow
	seen := make(map[string]int) // packet id -> index in packets
	var claims []Claim
	claimed := make(map[[2]string]bool)
	for _, e := range entries {
		switch e.kind {
		case "p", "x":
			// PostgreSQL refuses to upsert one row twice in a statement:
			// merge, keeping an expiry.
			if i, ok := seen[e.packet.id]; ok {
				if e.packet.expiredFromLog {
					packets[i] = e.packet
				}
				continue
			}
			seen[e.packet.id] = len(packets)
			packets = append(packets, e.packet)
		case "c":
			for _, c := range e.claims {
				k := [2]string{c.PacketID, c.User}
				if !claimed[k] {
					claimed[k] = true
					claims = append(claims, c)
				}
			}
		}
	}
	if len(packets) == 0 && len(claims) == 0 {
		return nil
	}
	tx, err := p.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	d := p.cfg.Dialect
	rowsPerInsert := d.rowsPerInsert()
	for start := 0; start < len(packets); start += rowsPerInsert {
		chunk := packets[start:min(start+rowsPerInsert, len(packets))]
		args := make([]any, 0, packetCols*len(chunk))
		for _, r := range chunk {
			var expired, shares, amount any // NULL until expired
			if r.expiredFromLog {
				expired, shares, amount = r.expired, r.leftShares, r.leftAmount
			}
			args = append(args, r.id, r.total, r.count, int(r.split), r.created, r.expires,
				expired, shares, amount)
		}
		if err := exec(ctx, tx, insertPackets+d.values(len(chunk), packetCols)+upsertPackets, args); err != nil {
			return err
		}
	}
	for start := 0; start < len(claims); start += rowsPerInsert {
		chunk := claims[start:min(start+rowsPerInsert, len(claims))]
		args := make([]any, 0, claimCols*len(chunk))
		for _, c := range chunk {
			args = append(args, c.PacketID, c.User, c.Amount, c.Seq, c.At.UnixMilli())
		}
		if err := exec(ctx, tx, insertClaims+d.values(len(chunk), claimCols)+skipClaims, args); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func exec(ctx context.Context, tx *sql.Tx, query string, args []any) error {
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}
