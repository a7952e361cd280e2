package waitqueue

import (
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/notice"
)

// HandOff is the argument that tells a releasing script how to hand what
// it frees to a waiter: 'command claim ms channel', the notice command
// for client (publish, or spublish on a Cluster), EntryTTL in ms, the
// claim time of what it hands over, and the notice channel.
func HandOff(client redis.UniversalClient, channel string) string {
	return notice.Command(client) + " " + strconv.FormatInt(EntryTTL.Milliseconds(), 10) + " " + channel
}
