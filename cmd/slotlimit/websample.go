package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The page's sampler: it finds the primitives every discoverEvery, reads
// each of them every sampleEvery, keeps the last keepHistory of readings
// in memory, so that a page opened late still plots the last minutes,
// and hands each round to the pages that listen. A key found that a
// reading shows to be no primitive (it holds another package's data or a
// value of a user's, or it lapsed) is left out of the round, as ls leaves
// it out (notPrimitive).

const (
	maxSampled    = 500              // the most primitives sampled; the page says when more were found
	sampleEvery   = time.Second      // one reading of each primitive
	discoverEvery = 10 * time.Second // one discovery
	keepHistory   = 10 * time.Minute // the readings kept, and plotted
	sampleWorkers = 8                // the readings made at once
)

// A webFinder finds the primitives the page shows, without reading their
// state (as findPrimitives does).
type webFinder func(ctx context.Context) ([]found, error)

// A webDescriber reads one found primitive's state (as describe does).
type webDescriber func(ctx context.Context, f *found)

// A primState is one primitive's last reading.
type primState struct {
	ID     string     `json:"id"` // kind, prefix, shard and key, which name it
	Kind   string     `json:"kind"`
	Key    string     `json:"key"`
	Prefix string     `json:"prefix,omitempty"`
	Shard  int        `json:"shard,omitempty"`
	State  string     `json:"state"`           // the state in one line
	Err    string     `json:"error,omitempty"` // why the last reading failed
	Vals   []*float64 `json:"vals"`            // its figures, in the order of its kind's; null when unknown
}

// itemID names the primitive f in the page's state.
func itemID(f found) string {
	return f.Kind + "\x00" + f.Prefix + "\x00" + strconv.Itoa(f.Shard) + "\x00" + f.Key
}

// A history is a primitive's readings over the last keepHistory, by
// column: the times (Unix milliseconds) and the figures at each.
type history struct {
	T []int64      `json:"t"`
	V [][]*float64 `json:"v"`
}

// A round is what the pages are told after each round of readings.
type round struct {
	Seq     int64       `json:"seq"`
	T       int64       `json:"t"`     // Unix milliseconds
	Found   int         `json:"found"` // primitives found
	Cap     int         `json:"cap"`   // the most sampled
	FindErr string      `json:"find_error,omitempty"`
	Prims   []primState `json:"prims"` // sorted by kind, as webKinds lists them, then key
}

// A sampler reads the primitives a finder finds, once a second.
type sampler struct {
	find     webFinder
	describe webDescriber
	late     func(ctx context.Context, f found) (time.Duration, bool) // a delay queue's lateness, when known
	timeout  time.Duration                                            // bounds each reading

	mu      sync.Mutex
	items   []found // the primitives sampled, sorted
	found   int     // the primitives the last discovery found, sampled or not
	last    round
	hist    map[string]*history // by itemID
	subs    map[chan round]struct{}
	started bool
	done    chan struct{}
}

func newSampler(find webFinder, describe webDescriber, timeout time.Duration) *sampler {
	return &sampler{find: find, describe: describe, timeout: timeout, hist: make(map[string]*history),
		subs: make(map[chan round]struct{}), done: make(chan struct{}), last: round{Cap: maxSampled, Prims: []primState{}}}
}

// run samples until ctx ends.
func (s *sampler) run(ctx context.Context) {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	defer close(s.done)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var found time.Time
	for {
		if time.Since(found) >= discoverEvery {
			s.discover(ctx)
			found = time.Now()
		}
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// wait returns once run has returned, if it was started.
func (s *sampler) wait() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		<-s.done
	}
}

// kindRank orders kinds as webKinds lists them, unknown kinds last.
func kindRank(kind string) int {
	for i, k := range webKinds {
		if k.Name == kind {
			return i
		}
	}
	return len(webKinds)
}

func compareItems(a, b found) int {
	if d := kindRank(a.Kind) - kindRank(b.Kind); d != 0 {
		return d
	}
	if d := strings.Compare(a.Key, b.Key); d != 0 {
		return d
	}
	if d := strings.Compare(a.Prefix, b.Prefix); d != 0 {
		return d
	}
	return a.Shard - b.Shard
}

// discover finds the primitives, keeping the first maxSampled in order.
// On an error it keeps those it had, and says so in the next round.
func (s *sampler) discover(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, max(s.timeout, 30*time.Second))
	defer cancel()
	items, err := s.find(ctx)
	if parent.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.last.FindErr = err.Error()
		return
	}
	s.last.FindErr = ""
	items = slices.DeleteFunc(slices.Clone(items), func(f found) bool { _, ok := kindOf(f.Kind); return !ok })
	slices.SortFunc(items, compareItems)
	items = slices.CompactFunc(items, func(a, b found) bool { return itemID(a) == itemID(b) })
	s.found = len(items)
	if len(items) > maxSampled {
		items = items[:maxSampled]
	}
	s.items = items
	keep := make(map[string]bool, len(items))
	for _, f := range items {
		keep[itemID(f)] = true
	}
	for id := range s.hist {
		if !keep[id] {
			delete(s.hist, id)
		}
	}
}

// sample reads every primitive once, records the readings of those that
// are primitives and tells the pages that listen.
func (s *sampler) sample(ctx context.Context) {
	s.mu.Lock()
	items := s.items
	s.mu.Unlock()
	states := make([]primState, len(items))
	isPrim := make([]bool, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(sampleWorkers, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				states[i], isPrim[i] = s.read(ctx, items[i])
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return
	}

	now := time.Now()
	t := now.UnixMilli()
	cut := now.Add(-keepHistory).UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := make([]primState, 0, len(items))
	for i, f := range items {
		if !isPrim[i] {
			delete(s.hist, itemID(f))
			continue
		}
		kept = append(kept, states[i])
		h := s.hist[itemID(f)]
		if h == nil {
			h = &history{}
			s.hist[itemID(f)] = h
		}
		h.T = append(h.T, t)
		h.V = append(h.V, states[i].Vals)
		old := 0
		for old < len(h.T) && h.T[old] < cut {
			old++
		}
		if old > 0 {
			h.T, h.V = slices.Delete(h.T, 0, old), slices.Delete(h.V, 0, old)
		}
	}
	s.last.Seq++
	s.last.T = t
	s.last.Found = s.found - (len(items) - len(kept))
	s.last.Prims = kept
	for ch := range s.subs {
		select {
		case ch <- s.last:
		default: // a page that is behind misses this round
		}
	}
}

// read reads one primitive, bounded by the timeout: its state, and its
// figures in the order of its kind's. It reports false when the reading
// shows that f is no primitive (notPrimitive).
func (s *sampler) read(ctx context.Context, f found) (primState, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	id := itemID(f)
	k, _ := kindOf(f.Kind)
	s.describe(ctx, &f)
	if notPrimitive(f) {
		return primState{}, false
	}
	if f.Kind == kindQueue && s.late != nil && f.Error == "" {
		if late, ok := s.late(ctx, f); ok {
			if f.Figures == nil {
				f.Figures = make(map[string]int64)
			}
			f.Figures[lateFigure] = late.Milliseconds()
		}
	}
	st := primState{ID: id, Kind: f.Kind, Key: f.Key, Prefix: f.Prefix, Shard: f.Shard, State: f.State, Err: f.Error,
		Vals: make([]*float64, len(k.Figures))}
	for i, fig := range k.Figures {
		if v, ok := f.Figures[fig[0]]; ok {
			x := float64(v)
			st.Vals[i] = &x
		}
	}
	return st, true
}

// A fullState is the last round with each primitive's history.
type fullState struct {
	round
	History map[string]history `json:"history"` // by itemID
}

// state returns the last round, with the histories when full is set.
func (s *sampler) state(full bool) fullState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := fullState{round: s.last}
	if full {
		out.History = make(map[string]history, len(s.hist))
		for id, h := range s.hist {
			out.History[id] = history{T: slices.Clone(h.T), V: slices.Clone(h.V)}
		}
	}
	return out
}

// subscribe returns a channel that is sent each round from now on, and
// a function that ends the subscription.
func (s *sampler) subscribe() (<-chan round, func()) {
	ch := make(chan round, 4)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}
}
