// Package bandit learns which job kinds co-locate well: the gradient-bandit
// preferences of learning-efficient-co-locations §4.3 (Eqs. 2 and 3).
//
// It owns the preference matrix H(a|a') over job kinds (a started while a'
// runs), its softmax π(a|a'), the goodness baseline Ḡ (global mean — the
// paper's —, per-row mean, or recency-weighted), optional clipping, warm
// starts of new kinds from similar ones, the mixing of several running kinds
// into one context for scoring candidates, sampling and argmax over the
// scores, snapshot/restore of the whole learner as plain JSON-ready data
// (the export and import format), parts of the matrices for views
// (SubMatrix), and what changed since the last save (Changes, a Delta of
// header and rows) so that the daemon persists a learning tick in O(R·K)
// for the R rows it updated, not O(K²).
//
// A Learner is safe for concurrent use: the HTTP API reads while the
// learning loop writes.
//
// What it must not do: I/O of any kind (persisting snapshots is the
// daemon's job), reading a clock (nothing here depends on time; the caller
// decides when to update), global state or global random sources (Sample
// takes an injected *rand.Rand), logging, and importing any other colocd
// package — goodness values arrive as plain float64. Standard library only.
package bandit
