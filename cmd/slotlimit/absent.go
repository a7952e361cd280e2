package main

import (
	"context"
	"fmt"
	"strings"
)

// none reports that key holds nothing of kind ("limiter", "lock", "delay
// queue", ...): it prints "no KIND at KEY" on stderr and ends the command
// with exit code 1.
func (c *cli) none(kind, key string) error {
	fmt.Fprintf(c.stderr, "no %s at %s\n", kind, display(key))
	return errNo
}

// wrongType explains, in words, an error Redis gave because key holds a
// value of another type than kind keeps there: it prints "KEY holds a Redis
// TYPE, not a KIND" on stderr and ends the command with exit code 1. Any
// other error is returned as it is.
func (c *cli) wrongType(err error, kind, key string) error {
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	typ, terr := c.client.Type(ctx, key).Result()
	if terr != nil || typ == "none" {
		fmt.Fprintf(c.stderr, "%s: a key beside it holds a value of another type than %s %s keeps there (another package's, or a value of yours)\n", display(key), article(kind), kind)
		return errNo
	}
	fmt.Fprintf(c.stderr, "%s holds a Redis %s, not %s %s (another package's, or a value of yours)\n", display(key), typ, article(kind), kind)
	return errNo
}

// article is the indefinite article of kind: "an" before a vowel, else "a".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an"
	}
	return "a"
}
