package examplefmt_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotlimit/slotlimit/internal/examplefmt"
)

func TestInt(t *testing.T) {
	steps := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1,000"},
		{-1000, "-1,000"},
		{-999, "-999"},
		{12345, "12,345"},
		{1234567, "1,234,567"},
		{-100000, "-100,000"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	}
	for i, s := range steps {
		assert.Equal(t, s.want, examplefmt.Int(s.n), "step %d: %d", i, s.n)
	}
}
