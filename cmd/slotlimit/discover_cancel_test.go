package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A Cancel's record beside a delay queue finds no queue: it outlives the
// queue's messages by a minute. The queue's own keys find it.
func TestClassifySkipsCancelRecords(t *testing.T) {
	for _, key := range []string{"{typo:jobs}/delayqueue:cancelled:ABC123", "{t}:jobs:delayqueue:cancelled:X"} {
		c, ok := classify(key)
		assert.False(t, ok, "%s: found %+v", key, c)
	}
	for key, of := range map[string]string{"{jobs}/delayqueue": "jobs", "{jobs}/delayqueue:dead": "jobs", "{t}:jobs:delayqueue:bodies": "{t}:jobs"} {
		c, ok := classify(key)
		if assert.True(t, ok, key) {
			assert.Equal(t, kindQueue, c.kind, key)
			assert.Equal(t, of, c.key, key)
		}
	}
}
