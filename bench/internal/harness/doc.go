// Package harness is what every benchmark command of this module shares:
// a Redis to run against, the clients that load it and read it, measured
// phases, bounded load, latency percentiles and the markdown report. It
// holds nothing specific to one primitive, so a package's benchmark adds
// only its own scenarios.
//
// A benchmark is a Suite: a list of Steps, each a scenario that measures
// something and keeps its figures, and a Report method that turns those
// figures into targets and tables. Main parses the shared flags (see
// Options), starts a loopback redis-server unless -redis names one, runs
// the steps in order and writes the report:
//
//	func main() {
//		b := &bench{settings: defaultSettings()}
//		b.registerFlags(flag.CommandLine)
//		harness.Main("costbench", b)
//	}
//
// Every phase is bounded twice, by a duration and by a count of
// operations (see Bounds), so a slow or a fast machine ends it either
// way. Each phase runs between a CONFIG RESETSTAT and a read of INFO
// commandstats (see Env.Measure), so the server's time per command is
// the load's alone: point a benchmark only at a Redis of its own.
package harness
