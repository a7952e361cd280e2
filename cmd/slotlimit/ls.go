package main

import (
	"context"
	"flag"
	"fmt"
)

// The command that lists every primitive in a Redis: ls (discover.go
// finds them).

func lsFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.kind, "kind", "", "list only primitives of kind `K`: limiter, counter, lock, queue, recent, packet, rate or adaptive")
}

// runLs lists the primitives found, with kind, key and state, sorted by
// kind, then key. Nothing found is the answer no.
func runLs(c *cli, args []string) error {
	pattern := ""
	if len(args) > 0 {
		pattern = args[0]
	}
	kind, err := parseKind(c.kind)
	if err != nil {
		return err
	}
	fs, err := discover(context.Background(), c.client, kind, pattern, c.timeout)
	if err != nil {
		return err
	}
	if c.json {
		if fs == nil {
			fs = []found{}
		}
		if err := c.writeJSON(fs); err != nil {
			return err
		}
	} else if len(fs) > 0 {
		t := newTable(c.stdout, "KIND", "KEY", "STATE")
		for _, f := range fs {
			t.row(f.Kind, display(f.Key), f.State)
		}
		t.flush()
	}
	if len(fs) == 0 {
		fmt.Fprintln(c.stderr, "nothing found")
		return errNo
	}
	return nil
}
