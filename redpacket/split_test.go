package redpacket

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every cut sums to Total with each share at least 1; Equal's shares
// differ by at most 1, the larger first; Random's each stay below twice
// the mean of what was left, and average the mean.
func TestShares(t *testing.T) {
	for _, p := range []Packet{
		{Total: 1, Count: 1}, {Total: 5, Count: 5}, {Total: 6, Count: 5}, {Total: 100, Count: 7},
		{Total: 10_000, Count: 100}, {Total: MaxTotal, Count: 3}, {Total: 1_000_000, Count: MaxShares},
	} {
		for _, split := range []Split{Random, Equal} {
			p.Split = split
			amounts := p.shares()
			require.Len(t, amounts, p.Count)
			var sum int64
			left := p.Total
			for i, a := range amounts {
				require.GreaterOrEqual(t, a, int64(1), "%+v share %d", p, i)
				k := int64(p.Count - i)
				if split == Random && k > 1 {
					require.LessOrEqual(t, a, max(2*left/k-1, 1), "%+v share %d: below twice the mean left", p, i)
				}
				if split == Equal {
					require.Contains(t, []int64{p.Total / int64(p.Count), p.Total/int64(p.Count) + 1}, a)
					if i > 0 {
						require.LessOrEqual(t, a, amounts[i-1], "the larger shares first")
					}
				}
				left -= a
				sum += a
			}
			require.Equal(t, p.Total, sum, "%+v", p)
		}
	}
}

// Over many packets, each position's share averages Total/Count under
// Random: no one gains by grabbing first or last.
func TestRandomSharesAverageTheMean(t *testing.T) {
	p := Packet{Total: 10_000, Count: 10, Split: Random}
	const packets = 20_000
	var sums [10]int64
	for range packets {
		for i, a := range p.shares() {
			sums[i] += a
		}
	}
	for i, s := range sums {
		assert.InDelta(t, 1000, float64(s)/packets, 30, "position %d", i)
	}
}
