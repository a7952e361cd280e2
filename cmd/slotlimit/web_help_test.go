package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The help of -allow-writes names every write the page offers: a
// limiter's force-release, a lock's break, a delay queue's requeue, drop
// and cancel, and a rate limit's reset.
func TestAllowWritesHelpNamesEveryWrite(t *testing.T) {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	webFlags(fs, &cli{})
	f := fs.Lookup("allow-writes")
	require.NotNil(t, f)
	for _, write := range []string{"force-release", "break", "requeue", "drop", "cancel", "reset"} {
		assert.Contains(t, f.Usage, write)
	}
}
