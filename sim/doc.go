// Package sim is a discrete-event simulator of a shared data-processing
// cluster where co-located jobs interfere: the embedded default backend of
// `colocd serve` and the ground truth of the co-location benchmark.
//
// # What it owns
//
//   - The workload format (ParseWorkload, LoadWorkload): a cluster of one
//     node type (cluster.nodes and cluster.node) or of node groups
//     (cluster.groups[]: name, nodes, node; a heterogeneous cluster, whose
//     first group's node is the reference node of ClusterSpec.Limits and
//     Pairwise), job kinds with per-container reservations and phase
//     profiles, a queue and its arrivals. Decoding is strict: unknown keys,
//     missing kinds, non-positive sizes and kinds that can never fit a
//     node or the cluster are *FieldError naming the key path
//     ("kinds[2].phases[0].seconds: must be > 0"). Optional keys of the
//     format: cluster.node.vcores (advertised vcores, default
//     floor(cores)), kinds[].setup and kinds[].teardown (phases run once
//     before and after the `repeat` iterations of kinds[].phases), and an
//     optional phases[].name. Optional keys of the ground truth, all
//     default 0: variability.jitter (Options.Jitter from the file) and
//     cluster.node.interference.disk_streams and .cpu_cache (see the model).
//     Optional keys of tenants: queue[].user (default "bench"), .queue
//     (default the entry's class, else "default") and .class (default
//     its queue), copied to each JobSpec; queue[].at, .every and .bursts
//     make an entry timed (its count jobs at at, at+every, …, bursts
//     times; durations as "10m" or seconds) instead of following
//     arrivals; and classes[], the service contract of a queue (name,
//     level, alpha and beta as {vcores, memory} shares, burst, weight).
//     Optional keys of a job's size: queue[].containers (its jobs' container
//     count instead of the kind's: declared, AppSpec.Containers, as a YARN
//     application's requests) and queue[].scale (every container's work
//     times scale, in (0, MaxScale]: hidden, AppSpec.Scale, only runtimes
//     and progress show it), copied to each JobSpec.
//   - Workload.Scaled: a workload on another number of nodes with another
//     number of jobs (`colocd sim --scale NODES:JOBS`). The cluster gets
//     the nodes; every kind's containers are multiplied by
//     round(sqrt(nodes / original nodes)), at least 1 and at most what the
//     scaled cluster holds; every queue entry's count is scaled to its
//     share of the jobs (at least 1, largest remainders first, so the total
//     is exactly the jobs when repeat and bursts allow); timed entries keep
//     their times, Poisson arrivals scale their rate with the jobs. It
//     refuses with a *FieldError what cannot be scaled (fewer jobs than
//     entries, nodes or jobs out of bounds, a cluster of node groups);
//     entries' container counts scale as their kinds'. Scaled(original nodes,
//     original jobs) is a copy of the workload.
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
// full-duplex NIC: its group's type (NodeInfo reports it). A job of a kind
// has Containers containers of one size (AppSpec.Containers, when set) and
// does Scale times the kind's work in each of them.
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
// Two optional effects (NodeSpec.Interference, both 0 by default, each in
// [0, 10]) make co-location cost more than sharing capacity; a job alone
// on a node never pays them, so solo durations stay exact:
//
//   - disk_streams p: while the working groups of n ≥ 2 different jobs on
//     a node have a disk demand (read + write > 0) in their current phase,
//     seeks between the streams cut the node's disk bandwidth to
//     disk_mbps / (1 + p·(n−1)). Progressive filling shares that lower
//     bandwidth, so disk throughput saturates lower, the disk-bound groups
//     slow down, and their starved CPU shows as more iowait.
//   - cpu_cache p: a CPU-bound group (≥ 0.5 cores per container in its
//     current phase) beside working CPU-bound groups of m other jobs
//     progresses 1 + p·m times slower than its share x from progressive
//     filling allows. It still burns x of its CPU demand, so CPU usage and
//     iowait do not show the loss; its work, and with it its disk and
//     network usage, advance at x / (1 + p·m), which AppInfo.Speed
//     reports. The disk and network the filling set aside for it beyond
//     that stay idle.
//
// Neither is in what a scheduler observes: ClusterSpec.Limits ignores
// them, and samples carry only their effects, so the daemon's learner never
// reads them; they are ground truth the learner must discover.
//
// Events are group completions, job completions and metrics ticks. Every
// MetricsInterval (10 s) each node yields a Sample: the exact time average
// over the interval of CPU busy and iowait fractions and disk/network
// bytes per second (goodness.Usage, as the collector returns; with
// Options.Pressure also the I/O pressure stall share, see share.go), and
// the applications that had containers there during the interval. With
// Options.ContainerMetrics, AppUsage also gives each application's share
// of a node's CPU and disk over a window, as the cgroups of its containers
// would (appusage.go): no network, no iowait.
//
// # Cost
//
// Events cost what they touch, not the size of the cluster. A group's
// progress is integrated lazily: it keeps its remaining work as of the time
// its rate was last set, and its completion time waits in a min-heap
// (stale entries, from before a rate change, skipped by generation); a
// list of dirty nodes says whose shares to recompute. So finding the next
// event costs O(log g) for g working groups, and stepping to it touches
// only the groups that complete, their apps and their nodes. A node's
// metrics are lazy too: its samples are stored run-length encoded
// (consecutive intervals with the same usage and the same apps are one
// run), and its intervals are closed when it is touched (its rates or apps
// change) or read (Usage, Samples, SampleRuns), so a metrics tick costs
// nothing and a node nothing changes costs nothing at all. SampleRuns reads
// the samples without expanding them (Samples does, for small runs and
// tests). Fits is O(1) (the free room per kind is kept as reservations
// change); Submit's placement walks the nodes once; Clone copies flat
// slices (nodes, groups, apps, the heap) and shares what never changes in
// place (a node's runs and app lists, an app's groups).
//
// Memory, from the struct sizes (BenchmarkScale reports them): a node is
// 264 B plus 88 B per sample run (one run while it is idle; about two per
// change of its rates, at most one per interval, while it is busy); a
// container group is 64 B (40 B, its entries in its app's and its node's
// lists, its heap entry); an app 216 B plus its strings. Measured on
// eight-kinds scaled to 10,000 nodes and 2,000 jobs under FIFO: 494 runs
// and 59 KB of live heap per node (0.6 GB), 307,375 groups, 3.1 s on one
// core.
//
// Everything is deterministic for Options.Seed (a PCG from math/rand/v2):
// placement, and the optional per-phase Jitter (Workload.NewSim takes it
// from the file's variability.jitter unless Options set it). Times are
// float seconds since Options.Start internally and time.Time at the API,
// rounded to the nanosecond.
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
