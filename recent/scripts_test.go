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
		{[]any{int64(1), int64(4)}, false}, // more than most
		{[]any{}, false},
		{nil, false},
	} {
		if _, err := decodeCount(c.reply, 3); (err == nil) != c.ok {
			t.Errorf("step %d: decodeCount(%v) = %v, want ok %v", i, c.reply, err, c.ok)
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
		items, err := decodeItems(c.reply, 2)
		if (err == nil) != c.ok || len(items) != c.n {
			t.Errorf("step %d: decodeItems(%v) = %d items, %v; want %d, ok %v", i, c.reply, len(items), err, c.n, c.ok)
		}
	}
	batch := [][]string{{"a", "b"}, {"c"}}
	for i, c := range []struct {
		reply any
		ok    bool
	}{
		{[]any{int64(1), int64(2), int64(1)}, true},
		{[]any{int64(1), int64(0), int64(0)}, true},
		{[]any{int64(1), int64(3), int64(1)}, false}, // more than the first call's values
		{[]any{int64(1), int64(0), int64(2)}, false}, // more than the second call's values
		{[]any{int64(1), int64(-1), int64(0)}, false},
		{[]any{int64(1), int64(1)}, false},
		{[]any{int64(1), int64(1), int64(1), int64(1)}, false},
		{[]any{int64(0), int64(1), int64(1)}, false},
		{[]any{int64(1), "1", int64(1)}, false},
		{int64(1), false},
		{nil, false},
	} {
		if counts, err := decodeCounts(c.reply, batch); (err == nil) != c.ok || (c.ok && len(counts) != 2) {
			t.Errorf("step %d: decodeCounts(%v) = %v, %v; want ok %v", i, c.reply, counts, err, c.ok)
		}
	}
}
