package keycycle

import (
	"slices"
	"testing"
)

// Each worker calls each of its keys perKey times in a row, then a key
// never used, on keys no other worker calls.
func TestNextCallsEachKeyPerKeyTimes(t *testing.T) {
	k := New("p", 2, 3)
	var w0, w1 []string
	for range 7 {
		w0 = append(w0, k.Next(0))
	}
	w1 = append(w1, k.Next(1))
	if want := []string{"p:0:0", "p:0:0", "p:0:0", "p:0:1", "p:0:1", "p:0:1", "p:0:2"}; !slices.Equal(w0, want) {
		t.Errorf("worker 0: %q, want %q", w0, want)
	}
	if want := []string{"p:1:0"}; !slices.Equal(w1, want) {
		t.Errorf("worker 1: %q, want %q", w1, want)
	}
	if got := New("q", 1, 0).Next(0); got != "q:0:0" {
		t.Errorf("perKey 0: %q", got)
	}
}
