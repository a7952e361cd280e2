// Command recent keeps a feed of the pages each user viewed last, with a
// slotlimit recent list per user, and checks itself.
//
// Four web servers (as four processes would) record the views of three
// users at once: each user browses on one server at a time, revisiting
// some pages. Each user's feed keeps the 5 newest distinct pages, newest
// first, with a 30-day TTL. The program prints each feed and checks it
// against the user's own browsing: at most 5 pages, no page twice, in the
// order last viewed. Then it removes a page from one feed and pages
// through another.
//
// It ends with a verdict, PASS or FAIL, and exits 1 on FAIL.
//
// By default it runs on an embedded miniredis; -redis host:port runs it
// against a real server (loopback only).
//
//	go run ./examples/recent
//	go run ./examples/recent -redis 127.0.0.1:6379
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/internal/exampleredis"
	"github.com/slotlimit/slotlimit/recent"
)

const feedSize = 5

func main() {
	log.SetFlags(0)
	addr := flag.String("redis", "", "Redis `host:port` (loopback); empty runs an embedded miniredis")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	addr, stop, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := fmt.Sprintf("example:recent:%d:", time.Now().UnixNano())

	feed := func(user string) (*recent.List, error) {
		return recent.New(client, recent.Config{Key: prefix + user, Max: feedSize, TTL: 30 * 24 * time.Hour})
	}
	users := []string{"alice", "bob", "carol"}
	pages := []string{"/home", "/shoes", "/hats", "/socks", "/coats", "/bags", "/belts", "/scarves"}

	// Each user browses 40 pages, each view recorded by a random server.
	viewed := map[string][]string{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failure error
	for _, user := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers := make([]*recent.List, 4)
			for i := range servers {
				l, err := feed(user)
				if err != nil {
					mu.Lock()
					failure = err
					mu.Unlock()
					return
				}
				servers[i] = l
			}
			var mine []string
			for range 40 {
				page := pages[rand.N(len(pages))]
				if err := servers[rand.N(len(servers))].Add(ctx, page); err != nil {
					mu.Lock()
					failure = err
					mu.Unlock()
					return
				}
				mine = append(mine, page)
			}
			mu.Lock()
			viewed[user] = mine
			mu.Unlock()
		}()
	}
	wg.Wait()
	if failure != nil {
		return failure
	}

	for _, user := range users {
		l, err := feed(user)
		if err != nil {
			return err
		}
		items, err := l.Items(ctx, 0, feedSize)
		if err != nil {
			return err
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Value)
		}
		want := lastDistinct(viewed[user], feedSize)
		fmt.Printf("%-5s viewed %d pages; recently viewed: %s\n", user, len(viewed[user]), strings.Join(got, " "))
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s's feed is %v, want %v", user, got, want)
		}
	}

	// Alice hides a page from her feed; Bob's feed is read two at a time.
	alice, _ := feed("alice")
	hidden := lastDistinct(viewed["alice"], 1)[0]
	n, err := alice.Remove(ctx, hidden)
	if err != nil {
		return err
	}
	left, err := alice.Len(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("alice hides %s: %d removed, %d left\n", hidden, n, left)
	if n != 1 || left != feedSize-1 {
		return fmt.Errorf("hiding %s removed %d and left %d, want 1 and %d", hidden, n, left, feedSize-1)
	}
	bob, _ := feed("bob")
	var paged []string
	for offset := int64(0); ; offset += 2 {
		page, err := bob.Items(ctx, offset, 2)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		var line []string
		for _, it := range page {
			paged = append(paged, it.Value)
			line = append(line, it.Value+" at "+it.At.UTC().Format("15:04:05.000"))
		}
		fmt.Printf("bob, page %d: %s\n", offset/2+1, strings.Join(line, ", "))
	}
	if want := lastDistinct(viewed["bob"], feedSize); !slices.Equal(paged, want) {
		return fmt.Errorf("bob's pages read %v, want %v", paged, want)
	}
	for _, user := range users {
		// A list of Key k lives at "{k}/recent" (see recent.Config.Key).
		client.Del(context.Background(), "{"+prefix+user+"}/recent")
	}
	fmt.Printf("PASS: every feed holds the %d pages last viewed, newest first, none twice; remove and pages work\n", feedSize)
	return nil
}

// lastDistinct returns the last n distinct values of views, newest first.
func lastDistinct(views []string, n int) []string {
	var out []string
	for i := len(views) - 1; i >= 0 && len(out) < n; i-- {
		if !slices.Contains(out, views[i]) {
			out = append(out, views[i])
		}
	}
	return out
}
