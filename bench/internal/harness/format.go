package harness

import (
	"fmt"
	"math"
	"strconv"
)

// Count formats n rounded to a whole number, with thousands separators.
func Count(n float64) string {
	v := int64(math.Round(n))
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	s := strconv.FormatInt(v, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Times formats a ratio as "1.02×".
func Times(x float64) string {
	return fmt.Sprintf("%.2f×", x)
}

// Ratio returns n/d, or 0 when d is 0.
func Ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Div returns a/b, or 0 when b is 0.
func Div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
