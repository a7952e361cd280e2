// Package keycycle names the keys of a load in which each worker calls
// each of its keys a number of times in a row, then moves to a key never
// used: the rate limiters' load, whose mix of new keys, allowed calls and
// refusals is then the same for every variant on any machine.
package keycycle

import "strconv"

// Keys are the keys of one variant's load.
type Keys struct {
	prefix  string
	perKey  int64
	workers []worker
}

// A worker is one worker's place in its keys. Only worker w reads or
// writes workers[w] during a phase.
type worker struct {
	calls int64    // calls begun
	key   string   // its current key
	_     [64]byte // keeps workers off each other's cache lines
}

// New returns the keys of workers workers, each called perKey times in a
// row (at least once), named prefix:<worker>:<n>.
func New(prefix string, workers int, perKey int64) *Keys {
	return &Keys{prefix: prefix, perKey: max(perKey, 1), workers: make([]worker, workers)}
}

// Next returns the key of worker w's next call. Calls for different
// workers may run at once; one worker's may not.
func (k *Keys) Next(w int) string {
	s := &k.workers[w]
	if s.calls%k.perKey == 0 {
		s.key = k.prefix + ":" + strconv.Itoa(w) + ":" + strconv.FormatInt(s.calls/k.perKey, 10)
	}
	s.calls++
	return s.key
}
