package waitqueue_test

import (
	"testing"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

func TestWantLimit(t *testing.T) {
	for i, s := range []struct {
		want  string
		limit int64
		ok    bool
	}{
		{"2:300000:60", 60, true},
		{"1:30000", 0, false}, // a lock's entry: no limit
		{"17", 0, false},      // the '' field: the last arrival number
		{"1:300000:", 0, false},
		{"1:300000:0", 0, false},
		{"1:300000:-5", 0, false},
		{"1:300000:+5", 0, false},
		{"x:300000:5", 0, false},
		{"1:2:3:4", 0, false},
		{"", 0, false},
	} {
		limit, ok := waitqueue.WantLimit(s.want)
		if limit != s.limit || ok != s.ok {
			t.Errorf("step %d: WantLimit(%q) = %d, %v; want %d, %v", i, s.want, limit, ok, s.limit, s.ok)
		}
	}
}
