// Package bench is colocd's co-location benchmark: it plays a workload
// (sim.Workload) on the cluster simulator in pure virtual time under an
// admission policy and measures makespan, job completion times, waits and
// resource usage, so that colocd's learned ordering can be compared side by
// side with FIFO, a random order, the paper's method, heuristics that know
// every kind's true profile (packfit, alternate, tetris: offline profiling),
// colocd with the true profiles, references that read the simulator's ground
// truth (pairwise, a greedy oracle, a per-decision rollout over sampled
// futures — the ceiling — and one that foresees the run's own), and a
// resource lower bound.
//
// # What it owns
//
//   - runOne: one virtual-time run of one policy on one seed (Result).
//     The policies fifo, random, packfit, alternate, tetris, pairwise, oracle,
//     rollout and rollout-foresight drive the simulator directly (peers.go,
//     direct.go); paper,
//     ra, ra-warm and ra-profile-true run colocd's own admission and learning code — the
//     queue store and pipeline, the bandit, engine.Engine over
//     simcluster.Cluster, driven by engine.Loop, the loop `colocd serve`
//     runs, whose Step this package calls in virtual time (it plays the
//     API's submissions and advances the simulator to the loop's due time or
//     the next event that would kick it). bound computes a lower bound on
//     the makespan without scheduling anything.
//   - RunAll: many runs (policies × seeds) on a bounded worker pool, with
//     results that do not depend on the parallelism; Summarize and
//     WriteTable: each policy's change against fifo, averaged over seeds,
//     with its spread and its share of the rollout's gain (SetRolloutShares:
//     the same per run, for --json).
//   - WritePlots, writeUsagePNG, writeProfilesPNG and writePreferencesPNG:
//     the PNG figures (resource usage over time, as the paper's Figures 6
//     and 7; the learned profiles against the true solo profiles; the
//     learned preferences as probabilities, as its Figure 8, in the
//     orientation used everywhere: rows the running kind, columns the
//     queued kind); CompareData and WriteComparePNG: the policies' change
//     against FIFO per workload, median, quartiles and min–max over seeds;
//     WriteScalePNG: the scale study's cost curves.
//   - RewardStudy: whether a pair's goodness ranks pairs as their speed-up
//     does, whether the profiles predict goodness, and ra by objective;
//     ProfileSpeed: a new kind's profile error per tick it was observed.
//   - The pair-preference studies: BestPartners (ground truth from sim.Pairwise),
//     LearningSpeed (co-location observations until π(best partners|a') >
//     0.8 for every kind) and WarmStart (a new kind's preferences
//     warm-started from job similarity, bandit.Learner.AddSimilar, against
//     the plain bandit).
//
// README.md records the measured figures and how to reproduce them.
//
// # What it must not do
//
// It is a leaf: nothing in colocd imports it but cmd/colocd. It does not
// change how colocd decides or learns: ra runs the daemon's code with the
// daemon's configuration, and any improvement found here goes into that
// configuration, never into a special case of the benchmark. It reads no
// wall clock (runs are deterministic for a seed and independent of how many
// run at once) and starts no goroutines except the worker pools of RunAll
// and the studies (the queue store has its own writer goroutine). Its only I/O is the
// temporary directory of the engine's store and the PNG files it is asked
// to write.
package bench
