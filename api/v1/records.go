package v1

import "time"

// Capacity is an amount of cluster resources.
type Capacity struct {
	MemoryMB int64 `json:"memory_mb"`
	VCores   int64 `json:"vcores"`
}

// DecisionRecord is one admission decision as the API explains it: what
// each ordering stage kept and dropped and why, the final distribution,
// and what the daemon did with it. GET /v1/decisions lists them; a job's
// "decision" holds the one that admitted it.
type DecisionRecord struct {
	At time.Time `json:"at"`
	// Chosen is the job id to admit; "" when no job can go (Note says why).
	Chosen     string `json:"chosen"`
	ChosenKind string `json:"chosen_kind,omitempty"`
	// Forced is set when a hard rule, not the distribution, chose the job.
	Forced     string        `json:"forced,omitempty"`
	Note       string        `json:"note,omitempty"`
	Context    []ContextKind `json:"context"`
	Stages     []StageRecord `json:"stages"`
	Candidates []Candidate   `json:"candidates"`
	// Passed: jobs that survived the fit stage and were ahead of Chosen in
	// the FIFO.
	Passed []string `json:"passed"`
	// Blocked: the oldest job of the window ahead of Chosen that did not
	// fit, if any.
	Blocked []string `json:"blocked,omitempty"`
	// Reserved is the job holding a reservation, if any: nothing else is
	// admitted until it is.
	Reserved string        `json:"reserved,omitempty"`
	Groups   []GroupRecord `json:"groups,omitempty"`
	// Queues are the service queues (fairness mode curves): what each
	// was entitled to, held and was owed at this decision.
	Queues []QueueRecord `json:"queues,omitempty"`
	// Shadow is set when the daemon ran in shadow mode: Chosen is what
	// colocd would have admitted, FIFOChoice what it did admit.
	Shadow     bool   `json:"shadow"`
	FIFOChoice string `json:"fifo_choice,omitempty"`
	// AppID is the cluster application the admitted job became.
	AppID string `json:"app_id,omitempty"`
}

// ContextKind is one running kind in the preference context.
type ContextKind struct {
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
}

// StageRecord is what one ordering stage did.
type StageRecord struct {
	Name    string `json:"name"`
	In      int    `json:"in"`
	Out     int    `json:"out"`
	Dropped []Drop `json:"dropped,omitempty"`
	// Omitted counts drops beyond those recorded.
	Omitted int    `json:"omitted,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Drop is one job a stage removed, and why.
type Drop struct {
	JobID  string `json:"job_id"`
	Reason string `json:"reason"`
}

// Candidate is one job in the final distribution: the oldest surviving job
// of its kind.
type Candidate struct {
	JobID  string  `json:"job_id"`
	Kind   string  `json:"kind"`
	Prob   float64 `json:"prob"`   // final probability
	Pref   float64 `json:"pref"`   // preference probability before starvation weights
	Weight float64 `json:"weight"` // starvation weight
	Skips  int     `json:"skips"`
	// Score is the co-location model's score (preference.mode model).
	Score *Score `json:"score,omitempty"`
}

// Score is a candidate's co-location score.
type Score struct {
	// Value is what the choice maximises (Model + Correction).
	Value float64 `json:"value"`
	// Model is the profiles' prediction; Correction the pair preferences'
	// adjustment.
	Model      float64 `json:"model"`
	Correction float64 `json:"correction,omitempty"`
	// Size is the factor the job's size multiplied Model by (its
	// containers to pipeline.preference.size_weight, while the queue
	// drains); absent when its size did not count.
	Size float64 `json:"size,omitempty"`
	// Alone is the expected share of the job's containers on empty nodes;
	// Beside the share beside each running kind.
	Alone  float64       `json:"alone"`
	Beside []ContextKind `json:"beside,omitempty"`
	// Known is false while the kind's profile is only the prior.
	Known bool `json:"known"`
	// Confounds: admitting it now would run a never-observed kind beside
	// another kind, so neither's usage could be told apart.
	Confounds bool `json:"confounds,omitempty"`
}

// GroupRecord is one fairness group at a decision.
type GroupRecord struct {
	Group   string  `json:"group"`
	Weight  float64 `json:"weight"`
	Share   float64 `json:"share"`   // of the running allocation, in capacity units
	Deficit float64 `json:"deficit"` // before this decision
	Pending int     `json:"pending"` // jobs in the window
}

// QueueRecord is one service queue at a decision.
type QueueRecord struct {
	Queue     string `json:"queue"`
	Level     int    `json:"level"`
	Guarantee string `json:"guarantee"` // hard, soft or elastic
	Entitled  Rate   `json:"entitled"`
	Held      Rate   `json:"held"`
	Owed      Rate   `json:"owed"`
	Pending   int    `json:"pending"`
}

// Rate is a share of the cluster's capacity per resource.
type Rate struct {
	VCores float64 `json:"vcores"`
	Memory float64 `json:"memory"`
}

// GoodnessRecord is one goodness observation of a learning tick: node Node
// ran kinds Chosen (admitted later) and Given (running before) over
// [From, To), with mean usage Usage and goodness G.
type GoodnessRecord struct {
	At     time.Time `json:"at"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Node   string    `json:"node"`
	Chosen string    `json:"chosen"`
	Given  string    `json:"given"`
	G      float64   `json:"g"`
	Usage  Usage     `json:"usage"`
}

// Usage is a node's mean usage over a goodness record's interval: CPU and
// I/O wait as fractions of the node's CPU time, the rest as fractions of
// the node's limits.
type Usage struct {
	CPU    float64 `json:"cpu"`
	IOWait float64 `json:"iowait"`
	// IOPressure and CPUPressure are omitted when 0 (no pressure
	// readings); Pressure when false (not read).
	IOPressure  float64 `json:"io_pressure,omitempty"`
	CPUPressure float64 `json:"cpu_pressure,omitempty"`
	Pressure    bool    `json:"pressure,omitempty"`
	DiskRead    float64 `json:"disk_read"`
	DiskWrite   float64 `json:"disk_write"`
	NetRecv     float64 `json:"net_recv"`
	NetSent     float64 `json:"net_sent"`
}

// QueuesReport is the body of GET /v1/queues: the fairness stage's queues
// as of the last decision.
type QueuesReport struct {
	Enabled bool   `json:"enabled"`
	Mode    string `json:"mode,omitempty"`     // deficit or curves
	GroupBy string `json:"group_by,omitempty"` // user or queue
	// At is the last decision's time; zero before the first.
	At            time.Time     `json:"at"`
	BurstPeriodNS int64         `json:"burst_period_ns,omitempty"`
	Queues        []QueueStatus `json:"queues"`
}

// QueueStatus is one queue: its contract and admission control's verdict
// (curves mode), and its service at the last decision. Rates are shares of
// the cluster's capacity.
type QueueStatus struct {
	Name      string   `json:"name"`
	Members   []string `json:"members,omitempty"`
	Class     string   `json:"class"`
	Level     int      `json:"level,omitempty"`
	Guarantee string   `json:"guarantee"` // hard, soft or elastic
	Reason    string   `json:"reason,omitempty"`
	Alpha     *Rate    `json:"alpha,omitempty"`
	Beta      *Rate    `json:"beta,omitempty"`
	BurstNS   int64    `json:"burst_ns,omitempty"`
	Weight    float64  `json:"weight"`
	// Entitled is the rate its curve entitled it to (Y), Owed what it
	// lacked of that, Received its mean rate over the burst period.
	Entitled *Rate `json:"entitled,omitempty"`
	Owed     *Rate `json:"owed,omitempty"`
	Received *Rate `json:"received,omitempty"`
	Held     Rate  `json:"held"`
	// Share is Held reduced by the fairness metric; Deficit the DRF
	// deficit (elastic groups).
	Share   float64 `json:"share"`
	Deficit float64 `json:"deficit"`
	Pending int     `json:"pending"`
}

// BaselineMode is the pair learner's reference goodness: "global" (the
// mean of every observation), "row" (one mean per running kind) or
// "recency" (a recency-weighted average). A request may also spell them
// "global-mean", "global_mean", "row-mean", "row_mean", in any case, or
// leave it empty for global.
type BaselineMode string

// The baseline modes as the server writes them.
const (
	BaselineGlobal  BaselineMode = "global"
	BaselineRow     BaselineMode = "row"
	BaselineRecency BaselineMode = "recency"
)

// LearnerConfig is the pair learner's configuration (learning.* in the
// daemon's configuration file).
type LearnerConfig struct {
	StepSize     float64      `json:"step_size"`
	Baseline     BaselineMode `json:"baseline"`
	RecencyAlpha float64      `json:"recency_alpha,omitempty"`
	Clip         float64      `json:"clip,omitempty"`
	SelfPrior    float64      `json:"self_prior,omitempty"`
}

// PreferencesSnapshot is the pair learner's whole state: the body of GET
// /v1/preferences?format=snapshot and of PUT /v1/preferences. Rows and
// columns are Kinds; H[i][j] = H(Kinds[j] | Kinds[i]).
type PreferencesSnapshot struct {
	Version int `json:"version"`
	// Config is the configuration the state was learned with, for the
	// record; an import does not apply it.
	Config      LearnerConfig `json:"config"`
	Kinds       []string      `json:"kinds"`
	H           [][]float64   `json:"h"`
	Baseline    float64       `json:"baseline"`
	RowBaseline []float64     `json:"row_baseline"`
	// Observations counts accepted updates; RowObservations[i] those with
	// Kinds[i] running; PairObservations[i][j] those that started Kinds[j]
	// beside Kinds[i].
	Observations     int64     `json:"observations"`
	RowObservations  []int64   `json:"row_observations"`
	PairObservations [][]int64 `json:"pair_observations"`
	// Rejected counts updates that were not applied.
	Rejected int64 `json:"rejected"`
}
