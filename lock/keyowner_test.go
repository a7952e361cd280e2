package lock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/lock"
)

// New refuses a Key that a package keeps beside another key with words
// that name the package and that key, so that the caller sees which key
// they meant; the error matches ErrInvalidConfig, and nothing is sent.
func TestNewNamesTheKeyARefusedKeyIsBeside(t *testing.T) {
	redistest.EachBackend(t, func(t *testing.T, b *redistest.Backend) {
		for key, words := range map[string]string{
			"{orders}:lock":        `is one that package lock keeps beside the key "{orders}"`,
			lock.SideKey("k", "q"): `is one that package lock keeps beside the key "k"`,
			"{ar:1}/w":             `is one that package slotlimit keeps beside the key "ar:1"`,
			"{user:42}/ratelimit":  `is one that package ratelimit keeps beside the key "user:42"`,
			"x:lock:{t}":           `is one that package lock keeps beside another key`,
		} {
			_, err := lock.New(b.Client, lock.Config{Key: key})
			assert.ErrorIs(t, err, lock.ErrInvalidConfig, key)
			assert.EqualError(t, err, `lock: invalid config: Key "`+key+`" `+words)
		}
		// Every package says it the same way.
		_, err := slotlimit.New(b.Client, slotlimit.Config{Key: "{orders}:lock", Limit: 1})
		assert.ErrorIs(t, err, slotlimit.ErrInvalidConfig)
		assert.ErrorContains(t, err, `Key "{orders}:lock" is one that package lock keeps beside the key "{orders}"`)
	})
}
