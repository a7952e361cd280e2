package main

import (
	"fmt"
	"strings"

	"github.com/slotlimit/slotlimit/bench/internal/harness"
)

// Shorthands for the report's cells.
var (
	count = harness.Count
	times = harness.Times
)

func f2(x float64) string { return fmt.Sprintf("%.2f", x) }

// find returns the result of the grabber named name.
func find(rs []harness.CallResult, name string) harness.CallResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return harness.CallResult{}
}

// row returns the persister's row of db and batch.
func (r results) row(db string, batch int) persistRow {
	for _, p := range r.persist {
		if p.db == db && p.batch == batch {
			return p
		}
	}
	return persistRow{db: db, batch: batch, skipped: "not run"}
}

// ratioHead is the head of the table of ratios.
var ratioHead = []string{"figure", "measured", "ratio"}

// ratios returns the rows of the table of ratios: the Store's grabs to
// the classic script's, and each database's rows/s with each batch to
// those with the batch before.
func (b *bench) ratios() [][]string {
	var rows [][]string
	for _, kind := range []struct {
		label   string
		results []harness.CallResult
	}{{"shares taken", b.taken}, {"sold out", b.refused}} {
		store, seed := find(kind.results, nameStore), find(kind.results, nameSeed)
		rate, seedRate := store.CallsPerSecond(), seed.CallsPerSecond()
		usec, seedUsec := store.ServerUsecPerCall(), seed.ServerUsecPerCall()
		rows = append(rows,
			[]string{fmt.Sprintf("grabs/s, Store.Grab / classic script, %d workers, %s", b.Workers, kind.label),
				fmt.Sprintf("%s vs %s grabs/s", count(rate), count(seedRate)), times(harness.Div(rate, seedRate))},
			[]string{fmt.Sprintf("Redis µs per grab, Store.Grab / classic script, %s", kind.label),
				fmt.Sprintf("%.2f vs %.2f µs", usec, seedUsec), times(harness.Div(usec, seedUsec))})
	}
	for _, db := range []string{nameSQLite, namePostgres} {
		for i := 1; i < len(batches); i++ {
			hi, lo := b.row(db, batches[i]), b.row(db, batches[i-1])
			name := fmt.Sprintf("%s rows/s, Batch %s / Batch %s", db, count(float64(hi.batch)), count(float64(lo.batch)))
			if hi.skipped != "" || lo.skipped != "" {
				rows = append(rows, []string{name, "skipped", "—"})
				continue
			}
			rows = append(rows, []string{name,
				fmt.Sprintf("%s vs %s rows/s", count(hi.perSecond()), count(lo.perSecond())),
				times(harness.Div(hi.perSecond(), lo.perSecond()))})
		}
	}
	return rows
}

// grabMix describes the grabs, the same for both grabbers.
func (b *bench) grabMix() string {
	return fmt.Sprintf("before each phase of grabs that take a share, each grabber gets %d new packets of %s shares (%s in all); the Store's are split Equal, %d cents a share, as the classic packets have one unit_amount, with the default TTL (24h) and one shard, so that every grab of the phase also appends to one claim log. The phase grabs them in order, every worker on one packet until it is empty, then on the next, each grab by a user that no other grab of the phase is by (ten-digit ids, the same for both grabbers), and ends when every share is taken, at -duration or at -max-ops: no grab of it finds its packet sold out, and the run checks that the shares the packets gave are the grabs counted. Before each phase of refusals, each grabber gets a packet of one share, which one user takes; every grab of the phase, each by another user, is then refused as sold out, and the run checks each reply. The classic script is called as the classic script calls it, with KEYS[1] the packet id, from which it makes its key names, and ARGV[1] \"userId-timeMillis\". Each phase's keys are deleted after it.",
		b.packets, count(float64(b.shares)), count(float64(b.packets*b.shares)), shareAmount)
}

// persistMix describes the persister's runs.
func (b *bench) persistMix() string {
	return fmt.Sprintf("for each database and Batch, a new Store gets one packet of N shares, N = %s with a Batch of 100 and of 1,000 and N = %s with a Batch of 1 (fewer, as each of its claims is a transaction of its own), and %d workers grab all of them, each grab by a user of its own, untimed: its claim log then holds N+1 entries, the packet and its claims. A Persister (that Batch, one shard, one consumer) then drains the log with Drain into a new database that holds the schema (CreateSchema) and no rows. This runs in %d rounds, the batches taking turns in each. The time is the Drains', each from its first command to its last ack; rows/s is the claim rows over it (the one packet row of each Drain is left out). After each Drain the run checks that it wrote every entry of the log, and that the database holds exactly N claim rows and one packet row; a failed check fails the run.",
		count(float64(b.claims)), count(float64(b.claimsBatch1)), b.Workers, b.Rounds)
}

// grabTable returns the table of one kind of grab.
func (b *bench) grabTable(title, intro, outro string, rs []harness.CallResult) harness.Table {
	t := harness.Table{
		Title: title,
		Intro: intro,
		Head:  []string{"variant", "grabs/s", "grabs/s / classic", "p50 / p99 / p99.9 (µs)", "top-level commands", "Redis µs per grab", "Redis µs / classic", "commands the script ran, per grab", "µs in those commands", "µs besides them", "commands sent per grab"},
		Outro: outro,
	}
	seed := find(rs, nameSeed)
	for _, c := range rs {
		usec := c.ServerUsecPerCall()
		inner := harness.Ratio(c.Server.NestedUsec(c.Commands...), c.Ops)
		t.Add(c.Name, count(c.CallsPerSecond()), times(harness.Div(c.CallsPerSecond(), seed.CallsPerSecond())),
			harness.Percentiles(c.Latency), strings.Join(c.Commands, ", "),
			f2(usec), times(harness.Div(usec, seed.ServerUsecPerCall())), c.Server.Nested(c.Ops, c.Commands...),
			f2(inner), f2(usec-inner), f2(c.CommandsPerCall()))
	}
	return t
}

// Report implements harness.Suite.
func (b *bench) Report(rep *harness.Report) {
	rep.Title = "slotlimit redpacket benchmarks"
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Run: %s; each phase of grabs %v and at most %s grabs (and, of grabs that take a share, at most the %s shares created for it); each grabber's phases in %d rounds, the grabbers taking turns; %d workers on one go-redis client with a pool of %d connections for every grabber and for the persister's Store.",
			rep.Machine.Date, b.Duration, count(float64(b.MaxOps)), count(float64(b.packets*b.shares)), b.Rounds, b.Workers, b.Pool),
		"Grabs: "+b.grabMix(),
		"Persister: "+b.persistMix(),
	)
	for _, n := range b.dbNotes {
		rep.Notes = append(rep.Notes, "Database: "+n)
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("These figures are ratios within one run on a shared, noisy %d-core machine where Redis, the databases, the load and its goroutines share the cores. Absolute numbers move from run to run; compare rows of the same run.", rep.Machine.CPUs),
	)

	rep.Add(harness.Table{
		Title: "Ratios",
		Intro: "Each figure against its baseline, measured in this run: Store.Grab against the classic script, on the same packets and users (see Grabs above), and the Persister's rows/s with each Batch against those with the Batch before, on the same database. Redis µs per grab is the server time (INFO commandstats usec) of EVALSHA, the grabbers' only top-level command, over their phases; it includes the commands the script runs. No target is set for these figures.",
		Head:  ratioHead,
		Rows:  b.ratios(),
	})

	rep.Add(b.grabTable(fmt.Sprintf("Grabs that take a share: %d workers", b.Workers),
		"Latencies are of each grab as the caller sees it. Redis µs per grab is the time of EVALSHA over the grabs. The commands a script ran are counted on their own lines by INFO commandstats too, so their time is shown apart, and the rest is the script's own (the Lua, its arguments, the call). Each grabber's top-level commands are checked against those its client sent in every phase.",
		"The two scripts do not do the same work. The classic reads and writes a stock and pushes \"userId-timeMillis\" to a list. Store.Grab also looks up the user's claim, so that a second grab by a user returns the first share instead of taking another; reads the server's clock, to refuse a packet whose TTL has passed; takes the share's amount off the packet's list of shares; keeps the user's claim and what is left in the packet's hash; and appends the claim to the claim log, which a Persister copies to SQL, so that a claim taken survives a crash of the process that took it. The ratio is what those promises cost on the server and in throughput, not the cost of a slower way to do the classic work.",
		b.taken))
	rep.Add(b.grabTable(fmt.Sprintf("Grabs refused, sold out: %d workers", b.Workers),
		"Every grab is of a packet whose one share is taken, by a user who holds no claim on it; columns as above.",
		"A refusal writes nothing in either script. Store.Grab reads more than the classic before it refuses (the user's claim, the packet's count, the clock, the share list); the classic script reads its stock alone.",
		b.refused))

	t := harness.Table{
		Title: "Persister: claims written to SQL",
		Intro: fmt.Sprintf("Each row is %d Drains, one a round, the batches taking turns, each of a claim log of N claims into a new database (see Persister above). Transactions are the batches each Drain committed, each followed by one XACK, which INFO commandstats counts. Redis µs per row is the server time of the Drains' top-level commands (the reads of the log, the MULTI and EXEC that ack and delete each batch, the look for idle entries, and the sweep for expired packets) over the claims; µs per row is the Drains' time over them.", b.Rounds),
		Head:  []string{"database", "Batch", "claims per Drain (N)", "Drains", "transactions per Drain", "Drains' time (s)", "rows/s", "rows/s / Batch 1", "µs per row", "Redis µs per row"},
		Outro: "With a Batch of 1 each claim is a transaction of its own, so its rows/s is mostly the database's durable commit on this machine's disk (see Database above), not the Persister's own work; a larger Batch shares a commit among its rows and writes them in multi-row INSERTs of up to 100 rows on SQLite and 1,000 on PostgreSQL, the faster size for each. These are one packet's claims written by one persister from one shard into empty tables, on the machine that runs Redis: more shards or persisters, a table of millions of rows, or a database across a network would give other figures. The classic script has no persister to compare with: its own job copies the list to MySQL once, and nobody retries it.",
	}
	for _, db := range []string{nameSQLite, namePostgres} {
		one := b.row(db, 1)
		for _, batch := range batches {
			r := b.row(db, batch)
			if r.skipped != "" {
				t.Add(db, count(float64(batch)), count(float64(r.claims)), "skipped", "skipped", "skipped", "skipped", "skipped", "skipped", "skipped")
				continue
			}
			rows := float64(r.rows())
			t.Add(db, count(float64(batch)), count(float64(r.claims)), count(float64(r.drains)), count(r.transactions()),
				f2(r.Elapsed.Seconds()), count(r.perSecond()), times(harness.Div(r.perSecond(), one.perSecond())),
				f2(harness.Div(float64(r.Elapsed.Microseconds()), rows)), f2(harness.Div(float64(r.redisUsec()), rows)))
		}
	}
	rep.Add(t)
}
