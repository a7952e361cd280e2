package harness

import (
	"flag"
	"fmt"
	"time"
)

// Options are the settings every benchmark command shares.
type Options struct {
	Addr     string        // host:port of a loopback Redis; empty starts a redis-server
	Out      string        // also write the report to this file
	Duration time.Duration // length of each measured phase
	Workers  int           // goroutines of the uncontended load
	Pool     int           // connections in the load client's pool
	MaxOps   int64         // most operations in any one phase
	Rounds   int           // rounds of each phase, its variants taking turns
}

// DefaultOptions returns the settings the flags default to.
func DefaultOptions() Options {
	return Options{Duration: 2 * time.Second, Workers: 64, Pool: 256, MaxOps: 2_000_000, Rounds: 3}
}

// RegisterFlags defines the shared flags on fs, each defaulting to o's
// value and setting it when fs is parsed.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "redis", o.Addr, "`host:port` of a loopback Redis to use; empty starts a redis-server")
	fs.StringVar(&o.Out, "o", o.Out, "also write the report to `file`")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each measured phase")
	fs.IntVar(&o.Workers, "workers", o.Workers, "goroutines of the uncontended load")
	fs.IntVar(&o.Pool, "pool", o.Pool, "connections in the load client's pool")
	fs.Int64Var(&o.MaxOps, "max-ops", o.MaxOps, "most operations in any one phase")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each phase, its variants taking turns")
}

// Check returns an error naming the first setting out of range.
func (o Options) Check() error {
	switch {
	case o.Duration <= 0:
		return fmt.Errorf("-duration %v: must be positive", o.Duration)
	case o.Workers < 1:
		return fmt.Errorf("-workers %d: must be at least 1", o.Workers)
	case o.Pool < 1:
		return fmt.Errorf("-pool %d: must be at least 1", o.Pool)
	case o.MaxOps < 1:
		return fmt.Errorf("-max-ops %d: must be at least 1", o.MaxOps)
	case o.Rounds < 1:
		return fmt.Errorf("-rounds %d: must be at least 1", o.Rounds)
	}
	return nil
}
