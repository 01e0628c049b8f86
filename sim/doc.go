// Package sim is a discrete-event simulator of a shared data-processing
// cluster where co-located jobs interfere: the embedded default backend of
// `colocd serve` and the ground truth of the co-location benchmark.
//
// # What it owns
//
//   - The workload format (ParseWorkload, LoadWorkload): a homogeneous
//     cluster, job kinds with per-container reservations and phase
//     profiles, a queue and its arrivals. Decoding is strict: unknown keys,
//     missing kinds, non-positive sizes and kinds that can never fit a
//     node or the cluster are *FieldError naming the key path
//     ("kinds[2].phases[0].seconds: must be > 0"). Keys added to the format
//     of issue 4: cluster.node.vcores (advertised vcores, default
//     floor(cores)), kinds[].setup and kinds[].teardown (phases run once
//     before and after the `repeat` iterations of kinds[].phases), and an
//     optional phases[].name.
//   - The simulator (Sim): placement, progress, the sharing model, metrics
//     samples, application ids and states, Clone for what-if questions.
//   - Realtime: plays a Sim against an injected wall clock, accelerated,
//     for `colocd serve`.
//   - Pairwise: the paper's §3.1 co-location experiment, used to calibrate
//     the shipped workloads (bench/README.md, "Calibration").
//
// # The model
//
// A node has physical cores, advertised vcores and memory (placement
// capacity, YARN-style), a disk bandwidth shared by reads and writes, and a
// full-duplex NIC. A job of a kind has Containers containers of one size.
// Submit places all of them or none (ErrNoFit): one group of GroupSize
// (3) containers on each empty node, then whole groups on random nodes with
// room, then single containers on random nodes with room (paper §6.1).
//
// A phase says how long one container takes alone and what it uses per
// second at full speed: CPU cores, disk read/write and network in/out MB/s.
// Between events all rates are constant. On each node, rates come from
// progressive filling (demand-weighted max-min fairness, see share.go): a
// saturated resource is shared in proportion to demand and each container
// progresses at the rate of its most starved resource, capped at solo
// speed. CPU that disk-starved containers cannot use is I/O wait, capped by
// the idle CPU, so CPU + iowait ≤ 1 on every node. The containers of one
// job on one node form a group; a job's phase ends when its slowest group
// finishes (stage barrier), then every group starts the next phase.
// Iterative kinds run setup once, phases `repeat` times, teardown once. A
// job alone, with nothing saturated, takes exactly KindSpec.SoloDuration.
//
// Events are group completions, job completions and metrics ticks. Every
// MetricsInterval (10 s) each node yields a Sample: the exact time average
// over the interval of CPU busy and iowait fractions and disk/network
// bytes per second (goodness.Usage, as the InfluxDB collector returns), and
// the applications that had containers there during the interval.
//
// Everything is deterministic for Options.Seed (a PCG from math/rand/v2):
// placement, and the optional per-phase Jitter. Times are float seconds
// since Options.Start internally and time.Time at the API, rounded to the
// nanosecond.
//
// # What it must not do
//
// It imports no other colocd package but goodness (the daemon adapts it to
// its Cluster and Metrics interfaces), reads no wall clock in the
// simulator (Realtime takes one injected), keeps no global state, and does
// no I/O except LoadWorkload reading its file. A Sim is not safe for
// concurrent use; Realtime is. It models interference, not failures: apps
// end finished or killed, never failed.
package sim
