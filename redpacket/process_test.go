package redpacket_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotlimit/slotlimit/internal/redistest"
	"github.com/slotlimit/slotlimit/redpacket"
)

// What a child learns from its parent.
const (
	childPrefixEnv = "SLOTLIMIT_TEST_RP_PREFIX"
	childUsersEnv  = "SLOTLIMIT_TEST_RP_USERS" // first and last user, "100-199"
)

// 5,000 users in 4 processes, 16 goroutines each, grab a packet of 100
// shares at once: exactly 100 claims, one per user at most, whose amounts
// sum to Total, each at least 1; then Remaining is 0.
func TestNoOversellAcrossProcesses(t *testing.T) {
	if redistest.ChildRole() == "grabber" {
		grabberChild(t)
		return
	}
	const users, procs, shares, total = 5000, 4, 100, 100_00
	for _, backend := range []func(*testing.T) *redistest.Backend{redistest.Redis, redistest.RedisCluster} {
		b := backend(t)
		t.Run(b.Name, func(t *testing.T) {
			s := newStore(t, b, redpacket.Config{Shards: 4})
			p := redpacket.Packet{ID: "rush", Total: total, Count: shares}
			require.NoError(t, s.Create(t.Context(), p))
			children := make([]*redistest.Child, procs)
			for i := range children {
				first, last := i*users/procs, (i+1)*users/procs-1
				children[i] = redistest.StartChild(t, b.Target(), "TestNoOversellAcrossProcesses", "grabber",
					childPrefixEnv+"="+s.Config().Prefix, fmt.Sprintf("%s=%d-%d", childUsersEnv, first, last))
			}
			claims := make(map[string]redpacket.Claim)
			seqs := make(map[int]string)
			var sum int64
			for _, c := range children {
				for {
					line := c.Await(t, "", 60*time.Second)
					if line == "done" {
						break
					}
					claim := parseClaimLine(t, line)
					_, twice := claims[claim.User]
					assert.False(t, twice, "user %s holds two claims", claim.User)
					other, taken := seqs[claim.Seq]
					assert.False(t, taken, "share %d went to %s and %s", claim.Seq, other, claim.User)
					assert.GreaterOrEqual(t, claim.Amount, int64(1))
					claims[claim.User], seqs[claim.Seq] = claim, claim.User
					sum += claim.Amount
				}
			}
			assert.Len(t, claims, shares)
			assert.Equal(t, int64(total), sum)
			left, amount, err := s.Remaining(t.Context(), p.ID)
			require.NoError(t, err)
			assert.Zero(t, left)
			assert.Zero(t, amount)
		})
	}
}

// grabberChild grabs the packet "rush" for its users, 16 at a time, and
// prints each claim it gets, then "done".
func grabberChild(t *testing.T) {
	ctx, client := redistest.ChildSetup(t, 16)
	s, err := redpacket.New(client, redpacket.Config{Prefix: os.Getenv(childPrefixEnv), Shards: 4})
	require.NoError(t, err)
	var first, last int
	_, err = fmt.Sscanf(os.Getenv(childUsersEnv), "%d-%d", &first, &last)
	require.NoError(t, err)
	users := make(chan int)
	var out sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range users {
				c, err := s.Grab(ctx, "rush", "user-"+strconv.Itoa(u))
				if errors.Is(err, redpacket.ErrSoldOut) {
					continue
				}
				require.NoError(t, err)
				out.Lock()
				fmt.Printf("%s %d %d\n", c.User, c.Amount, c.Seq)
				out.Unlock()
			}
		}()
	}
	for u := first; u <= last; u++ {
		users <- u
	}
	close(users)
	wg.Wait()
	fmt.Println("done")
}

// parseClaimLine reads a claim as grabberChild prints it.
func parseClaimLine(t *testing.T, line string) redpacket.Claim {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 3, "line %q", line)
	amount, err1 := strconv.ParseInt(f[1], 10, 64)
	seq, err2 := strconv.Atoi(f[2])
	require.NoError(t, err1)
	require.NoError(t, err2)
	return redpacket.Claim{PacketID: "rush", User: f[0], Amount: amount, Seq: seq}
}
