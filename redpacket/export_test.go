package redpacket

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/script"
)

// ClientOf returns the client s was made with, so that a test can make a
// Persister of s's logs on it.
func ClientOf(s *Store) redis.UniversalClient { return s.base.Client }

// GrabsHash is the SHA1 of grabs.lua, the script of a batch of Grabs, as
// EVALSHA names it.
func GrabsHash() string { return grabsScript.Hash() }

// LoadScripts caches the grab scripts on client's servers.
func LoadScripts(ctx context.Context, client redis.UniversalClient) error {
	for _, s := range []*script.Script{grabScript, grabsScript} {
		if err := s.Load(ctx, client).Err(); err != nil {
			return err
		}
	}
	return nil
}

// Queued returns the Grabs of packet id on s queued behind a batch in
// flight.
func Queued(s *Store, id string) int { return s.grabs.Queued(id) }
