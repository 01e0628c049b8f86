// Package plan is colocd's model-predictive admission: before the one-step
// rule's choice goes, it rolls the top few candidates out on colocd's own
// simulator (package sim) instantiated only from what colocd knows — each
// kind's learned profile and its uncertainty, its estimated solo runtime,
// the running jobs' placements and progress, the pending queue — and
// predicts which admission leads to the most work done over a horizon when
// the one-step rule decides the admissions after it.
//
// # What it owns
//
//   - Model: the cluster as colocd sees it (nodes' room and size, running
//     jobs and where they run, the pending window) and what it has learned
//     of each kind (Kind). Nodes of one size are simulated as one node
//     type, the largest room; nodes of different sizes (profile.Node.Size)
//     as node groups whose capacities are their sizes in the profiles'
//     units, with each sampled demand capped at what the smallest node
//     holds of one container.
//   - Config and Evaluate: per candidate, Samples futures, each a
//     simulator built from the model with every kind's demand drawn from
//     its profile's uncertainty and a fresh placement stream (the same
//     draws for every candidate), the candidate admitted, then the
//     one-step rule (profile.Scorer with the mean profiles) admitting what
//     fits at every completion until Horizon; one value per sample, by
//     Objective: minus the mean time until each job of the model finishes
//     (flow, the default), minus the time until all do (drain), or the
//     solo work done by the horizon (work).
//
// # What it must not do
//
// It reads nothing but its arguments: no clock, no store, no network, no
// ground truth of a simulated cluster (the simulator it builds knows only
// the model). Randomness comes from the seed it is given, so a decision is
// deterministic for it. It does not decide: the pipeline's lookahead
// stage compares the values and keeps the one-step choice unless another
// candidate is predicted better by a margin.
package plan
