package coalesce

import (
	"context"
	"testing"
)

// BenchmarkDoAlone measures what Do adds to a lone call.
func BenchmarkDoAlone(b *testing.B) {
	g := &Group[string, int, int]{Send: func(_ context.Context, _ string, reqs []int) ([]int, error) { return reqs, nil }}
	ctx := context.Background()
	b.ReportAllocs()
	for i := range b.N {
		if _, err := g.Do(ctx, "k", i); err != nil {
			b.Fatal(err)
		}
	}
}
