package harness

import (
	"slices"
	"time"
)

// Timings holds latency samples, one slice per worker, so that recording
// takes no lock. A sample may be negative, as a gap between two events
// seen by different goroutines can be; quantiles keep its sign.
type Timings [][]time.Duration

// NewTimings returns Timings for workers workers.
func NewTimings(workers int) Timings {
	return make(Timings, workers)
}

// Add records d for worker w. Each worker adds only to its own slice.
func (t Timings) Add(w int, d time.Duration) {
	t[w] = append(t[w], d)
}

// Len returns the number of samples.
func (t Timings) Len() int {
	n := 0
	for _, s := range t {
		n += len(s)
	}
	return n
}

// Quantiles returns the sample at each quantile q (0 < q < 1), or zeros
// when there are none.
func (t Timings) Quantiles(qs ...float64) []time.Duration {
	all := slices.Concat(t...)
	slices.Sort(all)
	out := make([]time.Duration, len(qs))
	if len(all) == 0 {
		return out
	}
	for i, q := range qs {
		out[i] = all[min(int(q*float64(len(all))), len(all)-1)]
	}
	return out
}
