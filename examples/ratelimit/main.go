// Command ratelimit serves HTTP behind slotlimit's rate limits and checks
// itself.
//
// Three users of one tenant call an API 50 times a second each for three
// seconds. Each user may make 10 requests a second (GCRA, bursts of 5),
// and the tenant 25 a second in all (a fixed window, the classic counter),
// checked together in one all-or-nothing call by the httplimit
// middleware. It prints the requests allowed and refused each second,
// and ends with a verdict, PASS or FAIL: no user and no tenant went over
// its limit, every refusal was a 429 with Retry-After and RateLimit
// headers, and every user was served. It exits 1 on FAIL.
//
// By default it runs on an embedded miniredis; -redis host:port runs it
// against a real server (loopback only).
//
//	go run ./examples/ratelimit
//	go run ./examples/ratelimit -redis 127.0.0.1:6379
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/internal/exampleredis"
	"github.com/slotlimit/slotlimit/ratelimit"
)

var (
	perUser   = ratelimit.Limit{Rate: 10, Period: time.Second, Burst: 5}
	perTenant = ratelimit.Limit{Rate: 25, Period: time.Second, Algorithm: ratelimit.FixedWindow}
	users     = []string{"ann", "bob", "cat"}
)

const (
	run   = 3 * time.Second
	every = 20 * time.Millisecond // each user's pace: 50 requests a second
)

func main() {
	log.SetFlags(0)
	addr := flag.String("redis", "", "Redis `host:port` (loopback); empty runs an embedded miniredis")
	flag.Parse()
	if err := runExample(*addr); err != nil {
		log.Printf("FAIL: %v", err)
		os.Exit(1)
	}
}

// tally counts one user's answers, per second of the run.
type tally struct {
	allowed, refused [int(run / time.Second)]int
	bad              []string // refusals without the promised headers
}

func runExample(addr string) error {
	addr, stop, err := exampleredis.Open(addr)
	if err != nil {
		return err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	tenant := fmt.Sprintf("{example:rl:acme:%d}", time.Now().UnixNano()) // the tenant's key, and the hash tag of its users'
	defer func() {
		keys := []string{tenant}
		for _, u := range users {
			keys = append(keys, tenant+":user:"+u+":ratelimit") // a GCRA limit's time, beside its key
		}
		client.Del(context.Background(), keys...)
	}()

	rate, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		return err
	}
	m, err := httplimit.New(httplimit.Config{
		Rate: rate,
		Policies: []httplimit.Policy{
			{Name: "per-user", Limit: perUser, Key: func(r *http.Request) string { return tenant + ":user:" + r.Header.Get("X-User") }},
			{Name: "per-tenant", Limit: perTenant, Key: func(*http.Request) string { return tenant }},
		},
		OnError: func(r *http.Request, err error) { log.Printf("redis: %v", err) },
	})
	if err != nil {
		return err
	}
	srv := httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})))
	defer srv.Close()

	fmt.Printf("3 users × 50 requests/s; limits: per user %v, per tenant %v\n", perUser, perTenant)
	tallies := make(map[string]*tally)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, user := range users {
		tallies[user] = &tally{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(every)
			defer tick.Stop()
			for ; time.Since(start) < run; <-tick.C {
				status, h, err := call(srv, user)
				if err != nil {
					log.Printf("user %s: %v", user, err)
					continue
				}
				second := min(int(time.Since(start)/time.Second), len(tallies[user].allowed)-1)
				mu.Lock()
				t := tallies[user]
				switch {
				case status == http.StatusOK:
					t.allowed[second]++
				case status == http.StatusTooManyRequests && h.Get("Retry-After") != "" && len(h.Values("RateLimit")) == 2:
					t.refused[second]++
				default:
					t.bad = append(t.bad, fmt.Sprintf("%d %v", status, h))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	span := time.Since(start)
	return verdict(tallies, span)
}

// call sends one request as user and returns its status and headers.
func call(srv *httptest.Server, user string) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-User", user)
	resp, err := srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// verdict prints the table and checks the limits over the whole span: a
// user is allowed at most Burst plus one request per 100ms, and the
// tenant 25 per window, windows starting at least a second apart.
func verdict(tallies map[string]*tally, span time.Duration) error {
	fmt.Printf("%-8s", "second")
	for _, u := range users {
		fmt.Printf("  %-16s", u+" ok/429")
	}
	fmt.Printf("  %s\n", "tenant ok")
	tenantTotal := 0
	for s := range int(run / time.Second) {
		fmt.Printf("%-8d", s+1)
		inSecond := 0
		for _, u := range users {
			t := tallies[u]
			fmt.Printf("  %-16s", fmt.Sprintf("%d/%d", t.allowed[s], t.refused[s]))
			inSecond += t.allowed[s]
		}
		tenantTotal += inSecond
		fmt.Printf("  %d\n", inSecond)
	}
	userMost := perUser.Burst + int64(span/(perUser.Period/time.Duration(perUser.Rate)))
	tenantMost := perTenant.Rate * (int64(span/perTenant.Period) + 1)
	for _, u := range users {
		t, total := tallies[u], 0
		for _, n := range t.allowed {
			total += n
		}
		switch {
		case len(t.bad) > 0:
			return fmt.Errorf("user %s: %d answers were neither 200 nor a 429 with its headers, e.g. %s", u, len(t.bad), t.bad[0])
		case int64(total) > userMost:
			return fmt.Errorf("user %s: %d allowed in %v, more than %d", u, total, span.Round(time.Millisecond), userMost)
		case total == 0:
			return fmt.Errorf("user %s was never served", u)
		}
	}
	if int64(tenantTotal) > tenantMost {
		return fmt.Errorf("tenant: %d allowed in %v, more than %d", tenantTotal, span.Round(time.Millisecond), tenantMost)
	}
	fmt.Printf("PASS: tenant %d ≤ %d and every user ≤ %d allowed in %v; every refusal was a 429 with Retry-After and RateLimit\n",
		tenantTotal, tenantMost, userMost, span.Round(time.Millisecond))
	return nil
}
