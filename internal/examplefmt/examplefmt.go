// Package examplefmt formats the numbers the runnable examples print.
package examplefmt

import (
	"strconv"
	"strings"
)

// Int formats n in decimal with commas between groups of three digits,
// and a leading "-" when n is negative: 1234567 as "1,234,567", -1000 as
// "-1,000", 999 as "999".
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
