package main

import (
	"strings"
	"testing"
)

// annotated is the part of callgrind_annotate --inclusive=yes's output
// that inclusive reads, as valgrind 3.19 prints it for a stripped
// redis-server 7.0.
const annotated = `--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
441,409 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                file:function
--------------------------------------------------------------------------------
441,409 (100.0%)  ./csu/../csu/libc-start.c:__libc_start_main@@GLIBC_2.34 [/usr/lib/x86_64-linux-gnu/libc.so.6]
175,541 (39.77%)  ???:readQueryFromClient [/usr/bin/redis-server]
 99,965 (22.65%)  ???:call [/usr/bin/redis-server]
 92,753 (21.01%)  ???:evalShaCommand [/usr/bin/redis-server]
 92,183 (20.88%)  ???:evalGenericCommand [/usr/bin/redis-server]
 13,948 ( 3.16%)  ???:call'2 [/usr/bin/redis-server]
`

// The inclusive count is the named function's own line, not a line of a
// function whose name begins the same, nor of a recursive call.
func TestInclusiveReadsTheFunctionsLine(t *testing.T) {
	for i, step := range []struct {
		fn   string
		want int64
	}{{"evalShaCommand", 92753}, {"evalGenericCommand", 92183}, {"call", 99965}} {
		got, err := inclusive(annotated, step.fn)
		if err != nil || got != step.want {
			t.Errorf("step %d: inclusive(%s) = %d, %v; want %d", i, step.fn, got, err, step.want)
		}
	}
}

// A function callgrind_annotate does not name, or names twice, is an
// error, not a count.
func TestInclusiveRefusesAMissingOrTwiceNamedFunction(t *testing.T) {
	if n, err := inclusive(annotated, "evalCommand"); err == nil {
		t.Errorf("inclusive(evalCommand) = %d, want an error", n)
	}
	twice := annotated + strings.Replace(annotated[strings.Index(annotated, " 92,753"):], "[/usr/bin/redis-server]", "[/other]", 1)
	if n, err := inclusive(twice, "evalShaCommand"); err == nil {
		t.Errorf("inclusive of a function named twice = %d, want an error", n)
	}
}
