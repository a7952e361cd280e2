package recent

import "testing"

// Each decoder takes only the reply its script promises, status first.
func TestDecodersRefuseOtherForms(t *testing.T) {
	for i, c := range []struct {
		reply any
		ok    bool
	}{
		{[]any{int64(1), int64(3)}, true},
		{[]any{int64(1), int64(0)}, true},
		{int64(3), false},
		{[]any{int64(0), int64(3)}, false},
		{[]any{int64(1)}, false},
		{[]any{int64(1), int64(-1)}, false},
		{[]any{int64(1), "3"}, false},
		{[]any{int64(1), int64(3), int64(4)}, false},
		{[]any{}, false},
		{nil, false},
	} {
		if _, ok := decodeCount(c.reply); ok != c.ok {
			t.Errorf("step %d: decodeCount(%v) ok = %v, want %v", i, c.reply, ok, c.ok)
		}
	}
	for i, c := range []struct {
		reply any
		n     int
		ok    bool
	}{
		{[]any{int64(1)}, 0, true},
		{[]any{int64(1), "a", "1700000000", "b", "1699999999.5"}, 2, true},
		{[]any{int64(1), "a"}, 0, false},
		{[]any{int64(1), "a", "x"}, 0, false},
		{[]any{int64(1), int64(2), "1"}, 0, false},
		{[]any{int64(1), "a", "1", "b", "2", "c", "3"}, 0, false}, // more than count
		{[]any{"a", "1"}, 0, false},
		{[]any{int64(0)}, 0, false},
	} {
		items, ok := decodeItems(c.reply, 2)
		if ok != c.ok || len(items) != c.n {
			t.Errorf("step %d: decodeItems(%v) = %d items, %v; want %d, %v", i, c.reply, len(items), ok, c.n, c.ok)
		}
	}
	if rest, ok := status([]any{int64(1)}); !ok || len(rest) != 0 {
		t.Errorf("status({1}) = %v, %v", rest, ok)
	}
}
