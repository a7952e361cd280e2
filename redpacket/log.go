package redpacket

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// An entry is one record of a shard's claim log, as the scripts write it
// (see scripts/lib.lua): a packet created ('p'), claims taken ('c': one
// claim, which grab.lua logs in one field, and one logged before that in
// fields of its own; or several claims of one packet, which grabs.lua
// logs together) or a packet expired ('x').
type entry struct {
	streamID string
	kind     string
	packet   packetRow // 'p' and 'x'
	claims   []Claim   // 'c'
}

// A packetRow is a packet as the database keeps it.
type packetRow struct {
	id             string
	total          int64
	count          int
	split          Split
	created        int64 // ms
	expires        int64 // ms
	expired        int64 // ms; 0 until it expires
	leftShares     int
	leftAmount     int64
	expiredFromLog bool // the row carries the expiry
}

// An Expiry reports the shares of a packet that no one took before it
// expired: what is owed back to whoever paid for it.
type Expiry struct {
	PacketID string    // the packet's ID, as given to Create
	Shares   int       // shares not taken
	Amount   int64     // their sum
	At       time.Time // when it was found expired, server clock
}

// parseEntry decodes a log entry. An entry with no values, which Redis
// returns for one deleted while pending, is an error.
func parseEntry(m redis.XMessage) (entry, error) {
	e := entry{streamID: m.ID, kind: str(m.Values, "k")}
	bad := false
	num := func(name string) int64 {
		n, err := strconv.ParseInt(str(m.Values, name), 10, 64)
		bad = bad || err != nil
		return n
	}
	switch e.kind {
	case "p", "x":
		e.packet = packetRow{
			id: str(m.Values, "id"), total: num("total"), count: int(num("count")),
			split: Split(num("split")), created: num("created"), expires: num("expires"),
		}
		if e.kind == "x" {
			e.packet.expired = num("expired")
			e.packet.leftShares = int(num("left"))
			e.packet.leftAmount = num("left_amount")
			e.packet.expiredFromLog = true
		}
		bad = bad || !validID(e.packet.id) || e.packet.count < 1 || e.packet.count > MaxShares ||
			e.packet.split != Random && e.packet.split != Equal
	case "":
		// A claim, its value as in the packet's field (see grab.lua).
		e.kind = "c"
		c, ok := parseClaim(str(m.Values, "id"), str(m.Values, "u"), str(m.Values, "c"))
		e.claims = []Claim{c}
		bad = !ok || !validClaim(c)
	case "b":
		// Claims taken together: the users and their claims, in order,
		// each list joined by NULs (see grabs.lua).
		e.kind = "c"
		id := str(m.Values, "id")
		users := strings.Split(str(m.Values, "u"), "\x00")
		claims := strings.Split(str(m.Values, "c"), "\x00")
		bad = len(users) != len(claims)
		for i := range users {
			if bad {
				break
			}
			c, ok := parseClaim(id, users[i], claims[i])
			bad = !ok || !validClaim(c)
			e.claims = append(e.claims, c)
		}
	case "c":
		// A claim logged before claims were one field.
		c := Claim{PacketID: str(m.Values, "id"), User: str(m.Values, "u"), Amount: num("a"),
			Seq: int(num("s")), At: time.UnixMilli(num("t"))}
		e.claims = []Claim{c}
		bad = bad || !validClaim(c)
	default:
		bad = true
	}
	if bad {
		return e, fmt.Errorf("log entry %s is not one the scripts write: %v", m.ID, m.Values)
	}
	return e, nil
}

// validClaim reports whether c is a claim the grab script could log.
func validClaim(c Claim) bool {
	return validID(c.PacketID) && validID(c.User) && c.Seq >= 1 && c.Seq <= MaxShares
}

// str is the string value of field name, "" if it has none.
func str(values map[string]any, name string) string {
	s, _ := values[name].(string)
	return s
}
