package engine

import "github.com/colocd/colocd/pipeline"

// AdmissionMode is active (admit the learned choice) or shadow (admit FIFO,
// journal the learned choice).
type AdmissionMode string

// Admission modes.
const (
	ModeActive AdmissionMode = "active"
	ModeShadow AdmissionMode = "shadow"
)

// Aggregate says how many updates one learning tick makes.
type Aggregate string

// Aggregations.
const (
	// AggregatePair: one update per co-located kind pair, with the mean
	// goodness of the nodes it shared (the paper's "goodness per
	// combination of co-located jobs").
	AggregatePair Aggregate = "pair"
	// AggregateNode: one update per node (a pair on 16 nodes counts 16 times).
	AggregateNode Aggregate = "node"
)

// CreditMode says which preference a co-location's goodness updates.
type CreditMode string

// Credit modes.
const (
	CreditLater     CreditMode = "later"     // H(later | earlier), the paper's
	CreditSymmetric CreditMode = "symmetric" // also H(earlier | later)
)

// PairReward is the reward of the pair preferences.
type PairReward string

// Pair rewards.
const (
	// RewardGoodness: the observed goodness (the paper).
	RewardGoodness PairReward = "goodness"
	// RewardResidual: observed goodness minus the profiles' prediction
	// (what the profiles cannot see: the correction of the model).
	RewardResidual PairReward = "residual"
)

// windowSize is how many pending jobs the engine reads per decision.
func windowSize(q pipeline.Config) int {
	if q.Window.Enabled && q.Window.Size > 0 {
		return q.Window.Size
	}
	return 1000 // window off: a bounded view of the queue's head
}

// fifoConfig is shadow mode's baseline: the same window, fit and fairness,
// then the oldest survivor (no altruism, preferences, starvation weights
// or sampling).
func fifoConfig(q pipeline.Config) pipeline.Config {
	q.Altruism.Enabled = false
	q.Preference.Enabled = false
	q.Starvation.Enabled = false
	q.Select.Enabled = false
	q.Lookahead.Enabled = false
	return q
}
