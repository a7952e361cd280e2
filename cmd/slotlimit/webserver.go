package main

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The page's HTTP side: the embedded page, its event stream, the details
// of each primitive, and the writes, with the rules that keep them safe.

//go:embed web
var webFiles embed.FS

// tokenHeader is the header a write carries its token in; the form field
// "token" may carry it instead.
const tokenHeader = "X-Slotlimit-Token"

// contentPolicy lets the page load its own script, style and data and
// nothing else: no inline script, no frame, no other origin.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// A webServer serves the page of one run of web.
type webServer struct {
	addr        string // the address bound, host:port
	token       string // "" when writes are off
	allowRemote bool
	sampler     *sampler
	reader      *webReader
	timeout     time.Duration
	mux         *http.ServeMux
}

// newWebServer returns the server of the page, which shows the
// primitives find finds, as describe reads them.
func newWebServer(c *cli, addr, token string, find webFinder, describe webDescriber) *webServer {
	reader := &webReader{client: c.client, typeWords: c.typeWords}
	s := &webServer{addr: addr, token: token, allowRemote: c.web.allowRemote, reader: reader,
		sampler: newSampler(find, describe, c.timeout), timeout: c.timeout, mux: http.NewServeMux()}
	s.sampler.late = reader.lateness
	static, _ := fs.Sub(webFiles, "web")
	s.mux.HandleFunc("GET /{$}", s.file(static, "index.html"))
	s.mux.HandleFunc("GET /p", s.file(static, "detail.html"))
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("GET /api/state", s.state)
	s.mux.HandleFunc("GET /api/detail", s.detail)
	s.mux.HandleFunc("/api/write", s.write)
	return s
}

// file serves the embedded file name.
func (s *webServer) file(static fs.FS, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, name)
	}
}

// ServeHTTP sets the headers every answer carries, and refuses a request
// whose Host is not the page's own (a DNS rebinding).
func (s *webServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r.Host) {
		http.Error(w, "refused: the Host header names neither the address the page listens on nor localhost", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// hostAllowed reports whether host, a request's Host header, names the
// page: the address it listens on, or localhost or a loopback address
// with its port; with -allow-remote, also any IP address with its port.
// Any other name may be a DNS name an attacker pointed at the page.
func (s *webServer) hostAllowed(host string) bool {
	if host == s.addr {
		return true
	}
	_, port, _ := net.SplitHostPort(s.addr)
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != port {
		return false
	}
	if isLoopbackHost(h) {
		return true
	}
	return s.allowRemote && net.ParseIP(h) != nil
}

func writeJSONTo(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// pageState is the state the page starts from: the sampler's, with the
// kinds and whether writes are on.
type pageState struct {
	fullState
	Kinds  []kindSpec `json:"kinds"`
	Writes bool       `json:"writes"`
}

func (s *webServer) pageState() pageState {
	return pageState{fullState: s.sampler.state(true), Kinds: webKinds, Writes: s.token != ""}
}

// state serves the last round and every primitive's history, as JSON.
func (s *webServer) state(w http.ResponseWriter, r *http.Request) {
	writeJSONTo(w, http.StatusOK, s.pageState())
}

// events streams the page's state: first an event "full", the state with
// the histories, then an event "round" after each round of readings.
func (s *webServer) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	rounds, stop := s.sampler.subscribe()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		flusher.Flush()
		return nil
	}
	if send("full", s.pageState()) != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case rd := <-rounds:
			if send("round", rd) != nil {
				return
			}
		}
	}
}

// detail serves the detail of the primitive that the query's kind and
// key name, as JSON. A key that holds no such primitive is answered 404,
// and one that holds a value of another type 409, with the commands'
// words in the field error ("no limiter at KEY", "KEY holds a Redis
// list, not a limiter …"); a bad query or key 400, and a failure of
// Redis's 502, which alone leaves the state unreadable.
func (s *webServer) detail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := found{Kind: q.Get("kind"), Key: q.Get("key"), Prefix: q.Get("prefix")}
	shard, err := strconv.Atoi(cmpOr(q.Get("shard"), "0"))
	k, ok := kindOf(f.Kind)
	if !ok || f.Key == "" || err != nil {
		writeJSONTo(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("no such kind %q, no key, or a bad shard", f.Kind)})
		return
	}
	f.Shard = shard
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	d, err := k.detail(s.reader, ctx, f)
	err = s.reader.explain(ctx, err, f.Kind, f.Key)
	d.Kind, d.Key = f.Kind, f.Key
	out := struct {
		detail
		Writes bool   `json:"writes"`
		Err    string `json:"error,omitempty"`
	}{detail: d, Writes: s.token != ""}
	code := http.StatusOK
	var (
		no    answer
		usage usageError
	)
	switch {
	case err == nil:
	case errors.As(err, &no): // no such primitive, or a key of another type
		code = no.status
	case errors.As(err, &usage), isInvalid(err):
		code = http.StatusBadRequest
	default: // Redis failed
		code = http.StatusBadGateway
	}
	if err != nil {
		out.Err = err.Error()
	}
	writeJSONTo(w, code, out)
}

// notQueued notes the IDs a cancel left alone: in flight, dead, or gone.
func notQueued(n, of int) string {
	if n < of {
		return fmt.Sprintf(" (%d neither ready nor delayed: left alone)", of-n)
	}
	return ""
}

// cmpOr returns s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// A writeResult is the answer to a write.
type writeResult struct {
	Done    bool   `json:"done"`
	Message string `json:"message"`
}

// write does one of the page's writes: a POST with the form fields kind,
// key, action and arg (one or more), and the token in the header
// X-Slotlimit-Token or the form field token. It is refused, with nothing
// sent to Redis, when writes are off (403), when it is not a POST (405),
// when it comes from another origin (403) and without the right token
// (403). Its answer is JSON: done, and a message. A write that finds
// nothing to do is answered 409 with the command's words, one on a key
// that holds no such primitive 404 ("no rate limit at KEY"), and one on
// a key of another type 409 with the words that explain it.
func (s *webServer) write(w http.ResponseWriter, r *http.Request) {
	refuse := func(code int, msg string) { writeJSONTo(w, code, writeResult{Message: msg}) }
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(http.StatusMethodNotAllowed, "writes are POSTs")
		return
	}
	if s.token == "" {
		refuse(http.StatusForbidden, "writes are off: start slotlimit web with -allow-writes")
		return
	}
	if !s.sameOrigin(r) {
		refuse(http.StatusForbidden, "refused: the request comes from another site")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		refuse(http.StatusBadRequest, "bad form: "+err.Error())
		return
	}
	given := r.Header.Get(tokenHeader)
	if given == "" {
		given = r.PostForm.Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) != 1 {
		refuse(http.StatusForbidden, "refused: no write token, or a wrong one (web prints it at start)")
		return
	}
	kind, key, action, args := r.PostForm.Get("kind"), r.PostForm.Get("key"), r.PostForm.Get("action"), r.PostForm["arg"]
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	msg, err := s.act(ctx, kind, key, action, args)
	err = s.reader.explain(ctx, err, kind, key)
	var (
		no    answer
		usage usageError
	)
	switch {
	case err == nil:
		writeJSONTo(w, http.StatusOK, writeResult{Done: true, Message: msg})
	case errors.As(err, &no): // no such primitive, or a key of another type
		refuse(no.status, no.words)
	case errors.Is(err, errNo):
		writeJSONTo(w, http.StatusConflict, writeResult{Message: msg})
	case errors.As(err, &usage), isInvalid(err):
		refuse(http.StatusBadRequest, err.Error())
	default:
		refuse(http.StatusBadGateway, err.Error())
	}
}

// sameOrigin reports whether r comes from the page itself: its Origin,
// when it has one, is the page's; without one, its Sec-Fetch-Site, when
// it has one, says same-origin. A request with neither comes from no
// browser (curl, a script), which the token alone admits.
func (s *webServer) sameOrigin(r *http.Request) bool {
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		return err == nil && u.Scheme == "http" && u.Host == r.Host && u.Path == ""
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	return true
}

// act does a write on the primitive of kind at key.
func (s *webServer) act(ctx context.Context, kind, key, action string, args []string) (string, error) {
	one := func() (string, error) {
		if len(args) != 1 || args[0] == "" {
			return "", usageErrorf("%s %s takes one arg", kind, action)
		}
		return args[0], nil
	}
	if key == "" {
		return "", usageErrorf("no key")
	}
	switch {
	case kind == kindLimiter && action == "release":
		holder, err := one()
		if err != nil {
			return "", err
		}
		return s.reader.release(ctx, key, holder)
	case kind == kindLock && action == "break":
		token, err := one()
		if err != nil {
			return "", err
		}
		return s.reader.breakLock(ctx, key, token)
	case kind == kindQueue && (action == "requeue" || action == "drop" || action == "cancel"):
		if len(args) == 0 {
			return "", usageErrorf("%s %s takes one or more IDs", kind, action)
		}
		q, err := newQueue(s.reader.client, key)
		if err != nil {
			return "", err
		}
		// The writes of queue requeue, drop and cancel; the answer's
		// wording is the page's own.
		var n int
		verb, left := "requeued", notDead
		switch action {
		case "requeue":
			n, err = requeueDead(ctx, q, args)
		case "drop":
			verb = "dropped"
			var before []string
			var known bool
			if before, known, err = deadAmong(ctx, q, args); err == nil {
				n, err = dropDead(ctx, q, args, before, known)
			}
		case "cancel":
			verb, left = "cancelled", notQueued
			n, err = cancelQueued(ctx, q, args)
		}
		if err != nil {
			return "", err
		}
		msg := fmt.Sprintf("%s %d of %s on %s%s", verb, n, plural(len(args), "ID"), key, left(n, len(args)))
		if n == 0 {
			return msg, errNo
		}
		return msg, nil
	case kind == kindRate && action == "reset":
		return s.reader.resetRate(ctx, key)
	}
	return "", usageErrorf("no write %q on a %s", action, strings.TrimSpace(kind))
}
