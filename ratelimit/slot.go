package ratelimit

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// hashKey is the part of key that Redis Cluster hashes: its hash tag, the
// text between the first '{' and the next '}' when that is not empty, and
// otherwise the whole key.
func hashKey(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}

// slot is key's Redis Cluster hash slot: CRC16 (XMODEM) of its hash key,
// modulo 16384.
func slot(key string) uint16 {
	var crc uint16
	for _, b := range []byte(hashKey(key)) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

// together reports whether one script may use every key on client: they
// share a hash slot, and on a Ring, which shards by the hash key itself,
// one hash key.
func together(client redis.UniversalClient, keys []string) bool {
	_, ring := client.(*redis.Ring)
	for _, key := range keys[1:] {
		if slot(key) != slot(keys[0]) || ring && hashKey(key) != hashKey(keys[0]) {
			return false
		}
	}
	return true
}
