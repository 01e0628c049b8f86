// Package engine is colocd's admission engine and its one loop: reconcile
// the store with the cluster at start, follow the cluster (sync), admit the
// pipeline's choice (admit), learn from node usage (learn), and the
// steppable Loop that runs these on an injected Clock — in wall time under
// `colocd serve`, in virtual time in the benchmark.
//
// It owns: the decision of when to act (the loop's cadences), the state
// transitions of admitted jobs (submitted at most once, proofs before a
// resubmission), the learner and the profile model as their only writer
// during a run, and the readiness reasons (ErrStarting … ErrStalled).
//
// It consumes small interfaces declared here: Cluster (and forgetful,
// JobPreparer) for the resource manager, UsageSource for node usage,
// PlacementSource for which applications ran where (learning.placement:
// influx, read through Options.Placement, a Placer), Clock,
// journalSink and telemetrySink. The adapters live in internal/simcluster,
// internal/yarncluster and internal/metricsource; daemon wires them.
//
// The learning tick learns from what ran on each node: by default the
// presence its syncs record of colocd's own jobs; with a Placer, the
// placement samples of every application, other tenants' counting as
// foreign kinds — named by the placement source (learning.foreign,
// internal/metricsource), capped here (PlacementConfig.MaxForeignKinds) —
// that join the compositions and the co-locations but are never admitted. The admission pass puts the foreign
// applications the last read saw on a node there, with their kinds, while
// the cluster still runs them (foreignView).
//
// Nodes of different hardware: the profiles' amounts are fractions of a
// reference node (Options.Limits and ReferenceVCores), and every node the
// syncs see gets its size against it (sizes.go): CPU from the vcores the
// resource manager reports for it, disk and network from its configured
// maxima (Options.NodeLimits). The learning tick reads each node's usage
// and goodness against its own maxima and gives the profiles its size;
// the scorer and the runtime credit read demands on it at its size.
//
// It must not: order the queue (package pipeline does), compute goodness,
// preferences or profiles (goodness, bandit, profile), speak HTTP
// (daemon/api), read configuration files (daemon decodes them into
// Options), or read the wall clock in its logic. Engine has no goroutines of
// its own; Loop.Run has one.
package engine
