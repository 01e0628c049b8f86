// Package profile learns each job kind's resource profile online and
// predicts how well a node's jobs use it: the model side of colocd's
// co-location choice (DESIGN.md, "Learning: pairs and profiles").
//
// # What it owns
//
//   - Model (model.go; the fit in fit.go, the prior in prior.go, the
//     covariance in covariance.go, the configuration in config.go): each
//     kind's per-container demand of CPU, I/O wait, disk read and write
//     and network in and out, fitted online by a recursive, non-negative,
//     saturation-aware least-squares regression of every node's mean usage
//     on the containers of each kind that ran there during the interval,
//     less the node baseline (learned apart, from nodes that ran nothing).
//     Any number of kinds per node, any container counts, kinds that
//     appear at run time. It keeps the normal equations in information
//     form, which are sparse: a kind's row holds only the kinds it shared
//     a node with, so the state is O(K + P) for K kinds and P co-located
//     pairs, and a learning tick costs O(N·m²) for N nodes with m kinds
//     each to fold in plus a few projected Gauss–Seidel sweeps, O(K + P)
//     each. Old observations are forgotten exponentially
//     (Config.HalfLife). Each kind has an uncertainty: the residual
//     variance over its effective observations, discounting what it shared
//     with the kinds it always ran beside (a kind seen only beside one
//     other cannot be told apart from it).
//   - The units: every amount is a fraction of the reference node's
//     capacity of the resource (CPU time, disk read and write bandwidth,
//     network in and out), per container (units.go). Usage converts a
//     node's measured usage into fractions of that node; a node of other
//     hardware carries its Size, its capacity per resource as a multiple of
//     the reference's (Observation.Size, Node.Size), so a container's
//     demand is node-independent: the fit counts the containers' part of a
//     node's usage (above the idle baseline) times its Size, saturation is
//     judged against the node's own capacity, and the scorer, Speeds and
//     the goodness prediction divide each demand by the Size of the node
//     it lands on. Zero Size is the reference node. Where the sizes come
//     from is the caller's (the engine: vcores from the resource manager,
//     disk and network from configuration).
//   - Prediction and scoring (score.go): where a candidate job's containers
//     will land (the cluster's placement rule: a group on each empty node,
//     then the nodes with room in proportion to it), each affected node's
//     usage with it added (demands summed; a resource asked beyond its
//     capacity is shared in proportion to demand, so every container using
//     it slows down; CPU starved by a saturated disk shows as I/O wait),
//     and the value of that: the predicted progress rate of the node's
//     containers, or the paper's goodness (Eq. 1) of the predicted usage.
//   - Snapshot and Restore of the model as plain JSON-ready data, and
//     what changed since the last save (Changes: a Delta of the header,
//     every kind's demand and the rows of the kinds a tick observed), so
//     that the daemon persists a tick without rewriting every row.
//
// # What it must not do
//
// It imports no colocd package but goodness, does no I/O, reads no clock
// and keeps no global state. A Model is safe for concurrent use (the API
// reads while the learning tick writes).
package profile
