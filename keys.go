package slotlimit

import (
	"strconv"

	"github.com/slotlimit/slotlimit/internal/hashtag"
)

// refusedSuffix names the refusal counter (Config.CountRefusals).
const refusedSuffix = "refused"

const fullSuffix = "full:"

// keyNames returns the names of the keys a Limiter of limit keeps beside
// its lease set at key (weights; the full marker; queue, queue deadlines,
// queue wants) and of its notice channel, all in key's Redis Cluster hash
// slot, as hashtag.SidePrefix names them: "{tenant}:ar:1:w" beside a key
// with a hash tag, "{ar:1}/w" beside any other. The full marker's name
// carries the limit, as "{ar:1}/full:60", since it says that this many
// units are in use. keyNames reports false for a key that has a '}' but
// no hash tag, since no tag can then reproduce its slot.
func keyNames(key string, limit int64) (aux [5]string, channel string, ok bool) {
	prefix, ok := hashtag.SidePrefix(key)
	if !ok {
		return aux, "", false
	}
	full := prefix + fullSuffix + strconv.FormatInt(limit, 10)
	return [5]string{prefix + "w", full, prefix + "q", prefix + "qd", prefix + "qw"}, prefix + "free", true
}

// refusedKey returns the name of the refusal counter beside a valid key
// (see Config.CountRefusals).
func refusedKey(key string) string {
	prefix, _ := hashtag.SidePrefix(key)
	return prefix + refusedSuffix
}
