// Package classic holds the classic scripts, verbatim, as services run
// them today: the INCR/DECR limiter scripts a Counter shares its key
// with, the recent-list script whose lists a List takes over, and the
// red-packet grab script. The tests run them beside the packages, and
// the benchmarks measure the packages against them.
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

	// Recent is the classic recent-list script, as its Java string
	// concatenation makes it: ZADD the member at the score, ZCARD, and
	// ZREMRANGEBYRANK the oldest above the max. KEYS[1] the list; ARGV[1]
	// the member, ARGV[2] the score (the client's clock in whole seconds),
	// ARGV[3] the max.
	Recent = "local key = KEYS[1] " +
		"local member = ARGV[1] " +
		"local score = ARGV[2] " +
		"local maxSize = tonumber(ARGV[3]) " +
		"redis.call('ZADD', key, score, member) " +
		"local size = redis.call('ZCARD', key) " +
		"if size > maxSize then " +
		"    redis.call('ZREMRANGEBYRANK', key, 0, size - maxSize - 1) " +
		"end " +
		"return 1"

	// Grab is the classic red-packet grab script, line by line, its
	// trailing spaces kept. It makes its key names from KEYS[1], the
	// packet id: red_packet_<id>, a hash whose field stock counts the
	// shares left, and red_packet_list_<id>, a list to which it pushes
	// ARGV[1], "userId-timeMillis". It returns 1 for a share taken, 2 for
	// the last one, and 0 when the packet is sold out.
	Grab = "local listKey = 'red_packet_list_'..KEYS[1]  \n" +
		"local redPacket = 'red_packet_'..KEYS[1] \n" +
		"local stock = tonumber(redis.call('hget', redPacket, 'stock')) \n" +
		"if stock <= 0 then \n" +
		"  return 0 \n" +
		"end \n" +
		"stock = stock-1\n" +
		"redis.call('hset', redPacket, 'stock', tostring(stock)) \n" +
		"redis.call('rpush', listKey, ARGV[1])  \n" +
		"if stock == 0 then \n" +
		"  return 2 \n" +
		"end  \n" +
		"return 1"
)
