package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
)

// none reports that key holds nothing of kind ("limiter", "lock", "delay
// queue", ...): it prints "no KIND at KEY" on stderr and ends the command
// with exit code 1.
func (c *cli) none(kind, key string) error {
	fmt.Fprintln(c.stderr, noneWords(kind, key))
	return errNo
}

// noneWords is none's answer: "no KIND at KEY".
func noneWords(kind, key string) string {
	return fmt.Sprintf("no %s at %s", kind, display(key))
}

// wrongType explains, in words, an error Redis gave because key holds a
// value of another type than kind keeps there: it prints "KEY holds a Redis
// TYPE, not a KIND" on stderr and ends the command with exit code 1. Any
// other error is returned as it is.
func (c *cli) wrongType(err error, kind, key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	words, ok := c.typeWords(ctx, err, kind, key)
	if !ok {
		return err
	}
	fmt.Fprintln(c.stderr, words)
	return errNo
}

// typeWords returns wrongType's words for err, and false when err is not
// Redis's WRONGTYPE.
func (c *cli) typeWords(ctx context.Context, err error, kind, key string) (string, bool) {
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		return "", false
	}
	typ, terr := c.client.Type(ctx, key).Result()
	if terr != nil || typ == "none" {
		return fmt.Sprintf("%s: a key beside it holds a value of another type than %s %s keeps there (another package's, or a value of yours)", display(key), article(kind), kind), true
	}
	if typ == "string" {
		// A Counter's, a fixed window's or a lock's, if the records beside
		// it say so.
		if words, err := claimedWords(ctx, c.client, kind, key); err == nil && words != "" {
			return words, true
		}
	}
	return typeText(key, typ, kind), true
}

// typeText is wrongType's words for key, which holds a Redis typ, not a
// kind.
func typeText(key, typ, kind string) string {
	return fmt.Sprintf("%s holds a Redis %s, not %s %s (another package's, or a value of yours)", display(key), typ, article(kind), kind)
}

// article is the indefinite article of kind: "an" before a vowel, else "a".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an"
	}
	return "a"
}

// confirm asks question on stderr, with " [y/N] " after it, and reports
// whether the answer read from stdin is y or yes.
func (c *cli) confirm(question string) bool {
	fmt.Fprintf(c.stderr, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(c.stdin).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}
