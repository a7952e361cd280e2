package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// packet show prints the shares and amount left, as integers with -json,
// and the claims in the order taken. On miniredis the Store has the
// default Config, and the command its default -prefix and -shards; on the
// shared real Redis, a prefix and shards of the test's own, given as
// flags. A packet that does not exist is the answer no.
func TestPacketShow(t *testing.T) {
	eachServer(t, func(t *testing.T, url string, b *redistest.Backend) {
		ctx := context.Background()
		cfg, flags := redpacket.Config{}, []string{}
		if b.Real {
			cfg = redpacket.Config{Prefix: strings.ReplaceAll(testKey(t, "cli-test-rp:"), "/", "-"), Shards: 4}
			flags = []string{"-prefix", cfg.Prefix, "-shards", "4"}
		}
		s, err := redpacket.New(b.Client, cfg)
		require.NoError(t, err)
		require.NoError(t, s.Create(ctx, redpacket.Packet{ID: "p1", Total: 1000, Count: 4, Split: redpacket.Equal, TTL: time.Hour}))
		var claims []redpacket.Claim
		for _, u := range []string{"zoe", "adam"} {
			c, err := s.Grab(ctx, "p1", u)
			require.NoError(t, err)
			claims = append(claims, c)
		}

		r := cli(t, "", nil, append([]string{"-u", url, "packet", "show", "-json", "p1"}, flags...)...)
		require.Equal(t, 0, r.code)
		got := jsonInts(t, r.stdout, "shares_left", "amount_left", "total", "count")
		assert.Equal(t, map[string]int64{"shares_left": 2, "amount_left": 500, "total": 1000, "count": 4}, got)
		var out struct {
			ID        string     `json:"id"`
			Found     bool       `json:"found"`
			Split     string     `json:"split"`
			CreatedAt time.Time  `json:"created_at"`
			ExpiresAt time.Time  `json:"expires_at"`
			ExpiredAt *time.Time `json:"expired_at"`
			Claims    []struct {
				Seq    int       `json:"seq"`
				User   string    `json:"user"`
				Amount int64     `json:"amount"`
				At     time.Time `json:"at"`
			} `json:"claims"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
		assert.Equal(t, "p1", out.ID)
		assert.True(t, out.Found)
		assert.Equal(t, "equal", out.Split)
		assert.Equal(t, time.Hour, out.ExpiresAt.Sub(out.CreatedAt))
		assert.Nil(t, out.ExpiredAt)
		require.Len(t, out.Claims, 2)
		for i, c := range out.Claims {
			assert.Equal(t, i+1, c.Seq)
			assert.Equal(t, claims[i].User, c.User)
			assert.Equal(t, int64(250), c.Amount)
			assert.True(t, claims[i].At.Equal(c.At))
		}

		r = cli(t, "", nil, append([]string{"-u", url, "packet", "show", "p1"}, flags...)...)
		require.Equal(t, 0, r.code)
		assert.Regexp(t, `(?m)^PACKET +p1$`, r.stdout)
		assert.Regexp(t, `(?m)^shares left +2 of 4$`, r.stdout)
		assert.Regexp(t, `(?m)^amount left +500 of 1000$`, r.stdout)
		assert.Regexp(t, `(?m)^expires +\d{4}-.* UTC \(TTL 1h0m0s\)$`, r.stdout)
		assert.Regexp(t, `(?m)^SEQ +USER +AMOUNT +AT \(SERVER CLOCK\)$`, r.stdout)
		assert.Regexp(t, `(?m)^1 +zoe +250 +\d{4}-`, r.stdout)
		assert.Regexp(t, `(?m)^2 +adam +250 +\d{4}-`, r.stdout)

		r = cli(t, "", nil, append([]string{"-u", url, "packet", "show", "nosuch"}, flags...)...)
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.True(t, strings.HasPrefix(r.stderr, "no red packet at nosuch\n"), r.stderr)
		r = cli(t, "", nil, append([]string{"-u", url, "packet", "show", "-json", "nosuch"}, flags...)...)
		assert.Equal(t, 1, r.code)
		assert.JSONEq(t, `{"id": "nosuch", "found": false}`, r.stdout)
		if b.Real {
			r = cli(t, "", nil, "-u", url, "packet", "show", "p1")
			assert.Equal(t, 1, r.code, "under the default prefix, there is no such packet")
		}
	})
}
