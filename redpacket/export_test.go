package redpacket

import "github.com/redis/go-redis/v9"

// ClientOf returns the client s was made with, so that a test can make a
// Persister of s's logs on it.
func ClientOf(s *Store) redis.UniversalClient { return s.base.Client }
