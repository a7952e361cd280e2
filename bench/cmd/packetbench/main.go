// Packetbench measures the slotlimit redpacket package against a real
// Redis, beside the classic grab script in the same run, and the
// package's Persister against SQLite and PostgreSQL, and prints a
// markdown report of the figures and of their ratios.
//
// It runs, in one process on one pool of connections:
//
//   - grabs on -workers goroutines (64), for each of: the classic script,
//     verbatim, by EVALSHA, on its own keys (red_packet_<id>, a hash
//     with a stock, and red_packet_list_<id>, a list); and Store.Grab;
//     first grabs that take a share, then grabs refused because the
//     packet is sold out; in -rounds rounds (3) that the variants take in
//     turns, each variant's Redis time summed over its top-level command
//     (EVALSHA), checked against those its client sent;
//   - the Persister's Drain of a log of -claims claims (20,000) into
//     SQLite (modernc.org/sqlite, a file in a temporary directory, in WAL
//     mode) and into PostgreSQL (pgx/v5 through database/sql, on a server
//     it starts), with a Batch of 100 and of 1,000, and of -claims-batch1
//     claims (2,000) with a Batch of 1, each into a new database, in
//     -rounds rounds that the batches take in turns; the rows are counted
//     after each Drain.
//
// Before each phase of grabs that take a share, it creates -packets
// packets (20) of -shares shares (10,000) for each variant, and the phase
// ends once it has grabbed them all, if -duration or -max-ops does not
// end it first: no grab finds its packet sold out. Each grab of a phase
// is by a user no other grab of the packet used, in both variants alike.
// Before each phase of refusals, it creates one packet of one share and
// grabs it; every grab of the phase, each by another user, is refused.
// It deletes a phase's keys after it.
//
// PostgreSQL needs initdb and postgres on PATH or in
// /usr/lib/postgresql/<version>/bin. Without them its rows are reported
// as skipped, with the reason, unless SLOTLIMIT_REQUIRE_POSTGRES=1, which
// makes the run fail.
//
// Without -redis it starts its own redis-server on a free loopback port,
// which needs redis-server on PATH, and stops it when done. From bench/:
//
//	go run ./cmd/packetbench
//	go run ./cmd/packetbench -o ../redpacket/BENCHMARKS.md
//
// It resets the server's statistics (CONFIG RESETSTAT) before each phase,
// so point it only at a Redis of its own. Its keys hold "packetbench:"
// and a random tag, and it deletes them when done.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
	"github.com/slotlimit/slotlimit/redpacket"
)

// settings are packetbench's own flags, beside the harness's.
type settings struct {
	packets      int           // packets each phase of grabs that take a share creates per variant
	shares       int           // shares in each of them
	claims       int           // claims the persister writes at a Batch of 100 and of 1,000
	claimsBatch1 int           // claims the persister writes at a Batch of 1
	timeout      time.Duration // bounds each fill of a log, and each Drain
}

func defaultSettings() settings {
	return settings{packets: 20, shares: 10_000, claims: 20_000, claimsBatch1: 2_000, timeout: 2 * time.Minute}
}

func (s *settings) registerFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.packets, "packets", s.packets, "packets each variant grabs from in a phase of grabs that take a share")
	fs.IntVar(&s.shares, "shares", s.shares, "shares in each of those packets")
	fs.IntVar(&s.claims, "claims", s.claims, "claims the persister writes with a Batch of 100 and of 1,000")
	fs.IntVar(&s.claimsBatch1, "claims-batch1", s.claimsBatch1, "claims the persister writes with a Batch of 1")
	fs.DurationVar(&s.timeout, "persist-timeout", s.timeout, "longest each fill of the claim log, and each Drain, may take")
}

// check returns an error naming the first setting out of range.
func (s settings) check() error {
	switch {
	case s.packets < 1:
		return fmt.Errorf("-packets %d: must be at least 1", s.packets)
	case s.shares < 1 || s.shares > redpacket.MaxShares:
		return fmt.Errorf("-shares %d: must be 1 to %d", s.shares, redpacket.MaxShares)
	case s.claims < 1 || s.claims > redpacket.MaxShares:
		return fmt.Errorf("-claims %d: must be 1 to %d, the shares of one packet", s.claims, redpacket.MaxShares)
	case s.claimsBatch1 < 1 || s.claimsBatch1 > redpacket.MaxShares:
		return fmt.Errorf("-claims-batch1 %d: must be 1 to %d, the shares of one packet", s.claimsBatch1, redpacket.MaxShares)
	case s.timeout <= 0:
		return fmt.Errorf("-persist-timeout %v: must be positive", s.timeout)
	}
	return nil
}

// A bench is the red packet's suite: what every scenario shares, and the
// figures they keep for the report.
type bench struct {
	settings
	*harness.Env
	seed     harness.Script
	grabbers []*grabber // the classic first
	results
}

// results are every figure of one run.
type results struct {
	taken   []harness.CallResult // grabs that take a share, a row per grabber
	refused []harness.CallResult // grabs refused, sold out, a row per grabber
	persist []persistRow         // per database, then per batch
	dbNotes []string             // what each database was, for the report
}

func main() {
	b := &bench{settings: defaultSettings()}
	b.registerFlags(flag.CommandLine)
	harness.Main("packetbench", b)
}

// Steps implements harness.Suite.
func (b *bench) Steps(env *harness.Env) []harness.Step {
	b.Env = env
	return []harness.Step{
		{Name: "setup", Run: b.setup},
		{Name: "grabs", Run: b.runGrabs},
		{Name: "persister, SQLite", Run: b.persistSQLite},
		{Name: "persister, PostgreSQL", Run: b.persistPostgres},
	}
}

// setup checks the settings, loads the classic script, makes the grabbers,
// loads their scripts with a grab each, and gives the load's pool its
// connections.
func (b *bench) setup(ctx context.Context) error {
	if err := b.check(); err != nil {
		return err
	}
	b.seed = harness.NewScript(seedGrab)
	if err := b.seed.Load(ctx, b.Admin); err != nil {
		return err
	}
	b.grabbers = []*grabber{b.seedGrabber(), b.storeGrabber()}
	for _, g := range b.grabbers {
		if _, err := b.soldOut(ctx, g, b.Key("warm:"+g.tag+":")); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	_, err := harness.Drive(ctx, harness.Bounds{Workers: b.Workers, Duration: b.Duration, MaxOps: 4 * int64(b.Workers)},
		func(ctx context.Context, _ int) error { return b.Client.Ping(ctx).Err() })
	return err
}
