// Package classic holds the classic INCR/DECR limiter scripts, verbatim,
// as services run them today on a plain integer key: the scripts a
// Counter shares its key with, which the tests run beside it, and a
// baseline the benchmarks measure the Limiter against.
package classic

const (
	// Incr takes a slot: KEYS[1] the counter, ARGV[1] the limit. Below
	// the limit it increments the counter and sets its expiry to 300 s.
	// It returns the count, which is the limit both when it took the last
	// slot and when it refused.
	Incr = "local count = redis.call('get',KEYS[1]);" +
		"if not count or tonumber(count) < tonumber(ARGV[1]) then " +
		"count=redis.call('incr',KEYS[1]);redis.call('EXPIRE', KEYS[1], 300);" +
		"end;" +
		"return tonumber(count)"
	// Decr frees a slot: KEYS[1] the counter. Above zero it decrements the
	// counter; it returns the count, or nil for a missing key.
	Decr = "local count = redis.call('get',KEYS[1]);" +
		"if count and tonumber(count)>0 then " +
		"count=redis.call('incrby',KEYS[1],-1);" +
		"end;" +
		"return tonumber(count)"
)
