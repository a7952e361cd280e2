package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/slotlimit/slotlimit"
	"github.com/slotlimit/slotlimit/httplimit"
	"github.com/slotlimit/slotlimit/ratelimit"
)

// exampleRedis starts an in-process Redis whose clock stands still, so
// the examples' output does not depend on the time they run. Real code
// passes its own client.
func exampleRedis() (*redis.Client, *miniredis.Miniredis) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	mr.SetTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	return redis.NewClient(&redis.Options{Addr: mr.Addr()}), mr
}

// Each user may make 3 requests a minute. The fourth in the minute is
// answered 429 Too Many Requests, with Retry-After in seconds, and every
// answer tells the client where it stands in the RateLimit-Policy and
// RateLimit headers.
func Example() {
	client, mr := exampleRedis()
	defer mr.Close()

	rate, err := ratelimit.New(client, ratelimit.Config{})
	if err != nil {
		panic(err)
	}
	m, err := httplimit.New(httplimit.Config{
		Rate: rate,
		Policies: []httplimit.Policy{{
			Name:  "per-user",
			Limit: ratelimit.PerMinute(3),
			Key:   func(r *http.Request) string { return "rl:user:" + r.Header.Get("X-User") },
		}},
	})
	if err != nil {
		panic(err)
	}
	handler := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for range 4 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-User", "42")
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		h := w.Result().Header
		fmt.Printf("%d Retry-After: %q RateLimit: %s RateLimit-Policy: %s\n",
			w.Code, h.Get("Retry-After"), h.Get("RateLimit"), h.Get("RateLimit-Policy"))
	}

	// Output:
	// 200 Retry-After: "" RateLimit: "per-user";r=2;t=20 RateLimit-Policy: "per-user";q=3;w=60
	// 200 Retry-After: "" RateLimit: "per-user";r=1;t=40 RateLimit-Policy: "per-user";q=3;w=60
	// 200 Retry-After: "" RateLimit: "per-user";r=0;t=60 RateLimit-Policy: "per-user";q=3;w=60
	// 429 Retry-After: "20" RateLimit: "per-user";r=0;t=60 RateLimit-Policy: "per-user";q=3;w=60
}

// With a concurrency limit, a request that finds every slot taken is
// answered 503 Service Unavailable with Retry-After, after waiting up to
// Wait for a slot that a finished request frees.
func ExampleConfig_concurrency() {
	client, mr := exampleRedis()
	defer mr.Close()

	slots, err := slotlimit.New(client, slotlimit.Config{Key: "api:backend", Limit: 1, TTL: time.Minute})
	if err != nil {
		panic(err)
	}
	m, err := httplimit.New(httplimit.Config{Concurrency: slots, Wait: 50 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	entered, finish := make(chan struct{}), make(chan struct{})
	handler := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-finish
		}
		fmt.Fprintln(w, "done")
	}))
	serve := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}

	slow := make(chan *httptest.ResponseRecorder)
	go func() { slow <- serve("/slow") }()
	<-entered // the one slot is taken

	w := serve("/fast") // waits 50ms for the slot, then is refused
	fmt.Println(w.Code, "Retry-After:", w.Result().Header.Get("Retry-After"), "RateLimit:", w.Result().Header.Get("RateLimit"))

	close(finish)
	fmt.Println((<-slow).Code, "for the slow request")
	fmt.Println(serve("/fast").Code, "once its slot is free")

	// Output:
	// 503 Retry-After: 1 RateLimit: "concurrency";r=0
	// 200 for the slow request
	// 200 once its slot is free
}
