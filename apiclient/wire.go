package apiclient

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/queue"
)

// JobRequest is the body of POST /v1/jobs. Its shape is fixed here, not by
// queue.Job, so the store's fields (id, state, ...) cannot be set by a
// client; the server rejects unknown fields. The omitempty options only
// shorten what a client sends: the server reads an absent field as its
// zero value.
type JobRequest struct {
	Kind      string            `json:"kind"`
	User      string            `json:"user,omitempty"` // empty: the token's user
	Queue     string            `json:"queue,omitempty"`
	Priority  int               `json:"priority,omitempty"`
	Resources *ResourcesRequest `json:"resources,omitempty"`
	Submit    json.RawMessage   `json:"submit,omitempty"`   // backend-specific
	Deadline  *string           `json:"deadline,omitempty"` // RFC 3339
	Labels    map[string]string `json:"labels,omitempty"`
}

// ResourcesRequest is the "resources" of a JobRequest: memory_mb and
// vcores are per container.
type ResourcesRequest struct {
	Containers int   `json:"containers"`
	MemoryMB   int64 `json:"memory_mb"`
	VCores     int   `json:"vcores"`
}

// Outcomes of a ResolveRequest.
const (
	OutcomeRequeue   = "requeue"
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
	OutcomeKilled    = "killed"
)

// ResolveRequest is the body of POST /v1/jobs/{id}/resolve.
type ResolveRequest struct {
	// Outcome: OutcomeRequeue (it never ran: back to its place in the
	// queue), or how it ended: OutcomeSucceeded, OutcomeFailed,
	// OutcomeKilled.
	Outcome string `json:"outcome"`
	// Reason is what the operator found (required, at most 1024 bytes);
	// it goes to the job's diagnostics.
	Reason string `json:"reason"`
}

// Job is a job as the API returns it: the stored queue.Job (its "submit"
// spec, idempotency key, labels and diagnostics only to its owner and
// admins: Redacted) and, for a pending job, where it stands in the queue.
type Job struct {
	queue.Job
	// Position is the number of pending jobs ahead of this one in FIFO
	// order (0 = head of the queue); only for pending jobs, in listings
	// and GET /v1/jobs/{id} (not in the POST response). The pipeline may
	// admit out of FIFO order, so it is a guide, not a promise.
	Position *int `json:"position,omitempty"`
	// EstimatedWait is set on GET /v1/jobs/{id} for pending jobs.
	EstimatedWait *WaitEstimate `json:"estimated_wait,omitempty"`
	// Redacted says the job is another user's and the caller is not an
	// admin: its submit spec, idempotency key, labels and diagnostics are
	// left out (empty), whatever it has.
	Redacted bool `json:"redacted,omitempty"`
}

// DecisionRecord decodes the decision that admitted the job (its
// "decision" field); nil when the job has none.
func (j Job) DecisionRecord() (*journal.DecisionRecord, error) {
	if len(j.Decision) == 0 {
		return nil, nil
	}
	var rec journal.DecisionRecord
	if err := json.Unmarshal(j.Decision, &rec); err != nil {
		return nil, fmt.Errorf("%w: job %s's decision: %w", ErrDecode, j.ID, err)
	}
	return &rec, nil
}

// WaitEstimate explains how long a pending job may wait:
//
//	seconds = Σ_{jobs ahead} EWMA runtime(kind) / concurrency
//
// where the EWMA runtimes come from the kinds' recurring history
// (queue.KindHistory), a job ahead whose kind has no history counts as the
// mean EWMA of the kinds that have one, and concurrency is the number of
// jobs admitted or running now (at least 1): the queue drains about that
// many jobs at a time. Seconds is null when no kind has any history.
type WaitEstimate struct {
	Seconds     *float64 `json:"seconds"`
	JobsAhead   int      `json:"jobs_ahead"`
	WithHistory int      `json:"jobs_ahead_with_history"`
	Concurrency int      `json:"concurrency"`
	// RuntimeSeconds is this job's own expected runtime (EWMA of its
	// kind), when known.
	RuntimeSeconds *float64 `json:"runtime_seconds,omitempty"`
	Method         string   `json:"method"`
}

// JobList is the body of GET /v1/jobs.
type JobList struct {
	Jobs   []Job               `json:"jobs"`
	Count  int                 `json:"count"`
	Counts map[queue.State]int `json:"counts"` // every job in the store by state
	// Now is the daemon's clock (virtual time on the simulator backend), so
	// clients can age timestamps without comparing them to their own clock.
	Now time.Time `json:"now"`
	// NextCursor, when set, continues the listing: pass it as ?cursor=
	// (ListOptions.Cursor) with the same filters for the next page. A page
	// may hold fewer jobs than the limit (filters that match few jobs)
	// and still have a next one; none means the listing is complete.
	NextCursor string `json:"next_cursor,omitempty"`
}

// StateCount is the number of stored jobs in one state.
type StateCount struct {
	State queue.State
	N     int
}

// StateCounts returns Counts in life-cycle order (queue.States), leaving
// out the states with no job.
func (l JobList) StateCounts() []StateCount { return InStateOrder(l.Counts) }

// InStateOrder returns counts in life-cycle order (queue.States), leaving
// out the states with no job.
func InStateOrder(counts map[queue.State]int) []StateCount {
	var out []StateCount
	for _, s := range queue.States {
		if n := counts[s]; n > 0 {
			out = append(out, StateCount{State: s, N: n})
		}
	}
	return out
}

// ErrorBody is the JSON shape of every error reply.
type ErrorBody struct {
	Error string `json:"error"` // for people; may change
	// Code is stable and machine-readable: CodeBadRequest,
	// CodeUnknownParameter, CodeForbidden, ... (the API's OpenAPI
	// description lists them).
	Code  string `json:"code"`
	Field string `json:"field,omitempty"` // the request field at fault, when one is
	// Rule names the rule behind a 403: a config key ("api.acl.submitter",
	// "api.proxy_users[0]", "api.job_groups") or "owner".
	Rule string `json:"rule,omitempty"`
}

// The codes of ErrorBody.Code (daemon/api declares the same).
const (
	CodeBadRequest           = "bad_request"
	CodeUnknownParameter     = "unknown_parameter"
	CodeUnauthenticated      = "unauthenticated"
	CodeTokenExpired         = "token_expired"
	CodeForbidden            = "forbidden"
	CodeProxyRefused         = "proxy_refused"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeTimeout              = "request_timeout"
	CodeConflict             = "conflict"
	CodeIdempotencyConflict  = "idempotency_conflict"
	CodeGone                 = "gone"
	CodeTooLarge             = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeRefused              = "refused"
	CodeInternal             = "internal"
	CodeLeaderUnreachable    = "leader_unreachable"
	CodeUnavailable          = "unavailable"
)

// Preferences is the body of GET /v1/preferences (and of PUT and DELETE).
// Rows are the running (given) kind, columns the queued kind: Kinds labels
// the columns and Rows the rows, H[i][j] = H(Kinds[j] | Rows[i]) and
// Pi[i][j] = π(Kinds[j] | Rows[i]), the softmax of the learner's whole
// row (over every kind it knows, so a row restricted by ?kinds= sums to at
// most 1). Unpaged, Rows is Kinds: every kind, or those of ?kinds=; a page
// (?limit=, ?offset=) holds Rows = the kinds at Offset.. of those, and
// Total says how many there are.
type Preferences struct {
	Kinds            []string      `json:"kinds"`
	Rows             []string      `json:"rows"`
	H                [][]float64   `json:"h"`
	Pi               [][]float64   `json:"pi"`
	Baseline         float64       `json:"baseline"`
	RowBaseline      []float64     `json:"row_baseline"`
	Observations     int64         `json:"observations"`
	RowObservations  []int64       `json:"row_observations"`
	PairObservations [][]int64     `json:"pair_observations"`
	Rejected         int64         `json:"rejected"`
	Config           bandit.Config `json:"config"` // the learner's (step size, baseline mode, ...)
	// Total is the number of rows selected (the kinds known, or those of
	// ?kinds=) of which this reply holds Rows, from Offset on.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	// KindsKnown is how many kinds the learner knows.
	KindsKnown int `json:"kinds_known"`
}

// Matrix names one matrix of the preferences.
type Matrix string

// The matrices of GET /v1/preferences?format=csv.
const (
	MatrixPi Matrix = "pi" // π, the probabilities
	MatrixH  Matrix = "h"  // H, the raw preference scores
	MatrixN  Matrix = "n"  // the pair observation counts
)

// Profiles is the body of GET /v1/profiles. The server reads its model
// field by field, so the fields may straddle a learning tick.
type Profiles struct {
	Kinds        []KindProfile `json:"kinds"`        // sorted by kind
	Baseline     Rates         `json:"baseline"`     // a node running nothing
	Sigma        Rates         `json:"sigma"`        // residual standard deviation of a node's usage
	Observations int64         `json:"observations"` // node observations folded in
	Limits       Limits        `json:"limits"`       // the maxima the rates were converted with
	// Total is the number of kinds selected (every kind the model knows,
	// or those of ?kinds=) of which this reply holds Kinds, from Offset on.
	Total  int `json:"total"`
	Offset int `json:"offset"`
}

// KindProfile is one kind's profile: the per-container demand and its
// standard deviation in measured units (demand, std) and the model's own
// utilisation units (demand_util).
type KindProfile struct {
	Kind       string  `json:"kind"`
	Known      bool    `json:"known"` // false: never observed, demand is the prior
	Ticks      int64   `json:"ticks"`
	Weight     float64 `json:"weight"`
	Dominant   string  `json:"dominant"` // cpu, disk, net_in or net_out
	Demand     Rates   `json:"demand"`
	Std        Rates   `json:"std"`
	DemandUtil Util    `json:"demand_util"`
}

// Rates is a profile.Vector in measured units: CPU and I/O wait as
// fractions of a node's CPU time, the rest in bytes per second. A rate is
// null where the server knows no maximum to convert with (its limit is
// zero).
type Rates struct {
	CPU          float64  `json:"cpu"`
	IOWait       float64  `json:"iowait"`
	DiskReadBps  *float64 `json:"disk_read_bps"`
	DiskWriteBps *float64 `json:"disk_write_bps"`
	NetInBps     *float64 `json:"net_in_bps"`
	NetOutBps    *float64 `json:"net_out_bps"`
}

// Util is a profile.Vector as is: every amount a fraction of one node's
// capacity of the resource.
type Util struct {
	CPU       float64 `json:"cpu"`
	IOWait    float64 `json:"iowait"`
	DiskRead  float64 `json:"disk_read"`
	DiskWrite float64 `json:"disk_write"`
	NetIn     float64 `json:"net_in"`
	NetOut    float64 `json:"net_out"`
}

// Limits are the nodes' maxima (goodness.Limits) in bytes per second;
// 0: unknown.
type Limits struct {
	DiskReadBps  float64 `json:"disk_read_bps"`
	DiskWriteBps float64 `json:"disk_write_bps"`
	NetInBps     float64 `json:"net_in_bps"`
	NetOutBps    float64 `json:"net_out_bps"`
}

// Queues is the body of GET /v1/queues: the fairness stage's queues as of
// the last decision (queue.QueuesReport).
type Queues = queue.QueuesReport

// DecisionList is the body of GET /v1/decisions.
type DecisionList struct {
	Decisions []journal.DecisionRecord `json:"decisions"` // newest first
}

// GoodnessList is the body of GET /v1/goodness.
type GoodnessList struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Total counts the records in the window; Records holds the newest
	// limit of them, oldest first. Pairs and Nodes summarise all Total.
	Total   int                      `json:"total"`
	Records []journal.GoodnessRecord `json:"records"`
	Pairs   []PairSummary            `json:"pairs"` // by (chosen, given)
	Nodes   []NodeSummary            `json:"nodes"` // by node
}

// PairSummary aggregates the goodness of kind Chosen started beside Given.
type PairSummary struct {
	Chosen string  `json:"chosen"`
	Given  string  `json:"given"`
	Count  int     `json:"count"`
	MeanG  float64 `json:"mean_g"`
	MinG   float64 `json:"min_g"`
	MaxG   float64 `json:"max_g"`
}

// NodeSummary aggregates the goodness observed on one node.
type NodeSummary struct {
	Node  string  `json:"node"`
	Count int     `json:"count"`
	MeanG float64 `json:"mean_g"`
}

// Clock is the body of GET /v1/clock: how the daemon's clock, on which
// every API timestamp lies, relates to the wall clock. On YARN they are the
// same. On the simulator backend the daemon's clock is the simulator's
// virtual clock, which runs Speed times faster than the wall clock and
// resumes where it stopped when the daemon restarts; Runs records each
// start so that any stored timestamp can be placed on the wall clock
// (Clock.Wall).
type Clock struct {
	// Simulated is true on the simulator backend.
	Simulated bool `json:"simulated"`
	// Now is the daemon's clock; WallNow the wall clock, read together.
	Now     time.Time `json:"now"`
	WallNow time.Time `json:"wall_now"`
	// Speed is daemon-clock seconds per wall second (1 on YARN).
	Speed float64 `json:"speed"`
	// Started and WallStarted are the two clocks when this daemon process
	// started: the default start of the API's time windows.
	Started     time.Time `json:"started"`
	WallStarted time.Time `json:"wall_started"`
	// Runs are the daemon's starts on this data directory, oldest first
	// (simulated only; at most the last MaxClockRuns).
	Runs []ClockRun `json:"runs,omitempty"`
}

// MaxClockRuns bounds Clock.Runs.
const MaxClockRuns = 1000

// ClockRun is one start of the daemon on the simulator: from then on the
// virtual clock ran from From at Speed × the wall clock from WallFrom.
type ClockRun struct {
	From     time.Time `json:"from"`
	WallFrom time.Time `json:"wall_from"`
	Speed    float64   `json:"speed"`
}

// Wall places t, a time on the daemon's clock, on the wall clock: t itself
// when the clock is not simulated; otherwise by the last run that started
// at or before t, the wall time it would have had if the simulator kept
// pace (it runs at Speed unless it falls behind). ok is false for a time
// before the first recorded run.
func (c Clock) Wall(t time.Time) (wall time.Time, ok bool) {
	if !c.Simulated {
		return t, true
	}
	runs := c.Runs
	if len(runs) == 0 {
		runs = []ClockRun{{From: c.Started, WallFrom: c.WallStarted, Speed: c.Speed}}
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if t.Before(r.From) || r.Speed <= 0 {
			continue
		}
		return r.WallFrom.Add(time.Duration(float64(t.Sub(r.From)) / r.Speed)), true
	}
	return time.Time{}, false
}

// JobListEstimate is the body of GET /v1/jobs?estimate=1: the JobList,
// every pending job in it with its EstimatedWait (computed in one pass
// over the listed jobs, the same estimate as GET /v1/jobs/{id}), the
// whole queue's and the expected runtimes of the listed jobs' kinds.
type JobListEstimate struct {
	JobList
	// QueueWait estimates how long until the last pending job is
	// admitted: the wait of a job behind every pending one (JobsAhead is
	// the number of pending jobs). Null when nothing is pending or the
	// listing's states leave out pending.
	QueueWait *WaitEstimate `json:"queue_wait"`
	// KindRuntimes is the EWMA runtime in seconds (queue.KindHistory) of
	// each listed job's kind that has a history: what a running job's
	// progress is measured against.
	KindRuntimes map[string]float64 `json:"kind_runtimes"`
}

// GoodnessScale is the range of goodness G (goodness.Min, goodness.Max:
// e and e⁴) that colour scales span.
type GoodnessScale struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// NodeList is the body of GET /v1/nodes: the cluster's nodes as the engine
// last read them, each with its applications and its latest goodness
// record.
type NodeList struct {
	// Available is false when the daemon has no view of the cluster (none
	// read yet, or none served): everything else is empty.
	Available bool `json:"available"`
	// ReadAt is when the engine read the cluster, on the daemon clock.
	ReadAt   *time.Time     `json:"read_at,omitempty"`
	Capacity queue.Capacity `json:"capacity"` // the whole cluster's
	Free     queue.Capacity `json:"free"`
	// Total is the number of nodes; Nodes holds a page of them from
	// Offset on, in Sort order ("name", or "goodness": lowest latest G
	// first, nodes without a record last).
	Total  int    `json:"total"`
	Offset int    `json:"offset"`
	Sort   string `json:"sort"`
	// GoodnessFrom and GoodnessTo bound the records searched for each
	// node's latest (the default window of GET /v1/goodness).
	GoodnessFrom time.Time     `json:"goodness_from"`
	GoodnessTo   time.Time     `json:"goodness_to"`
	Scale        GoodnessScale `json:"scale"`
	// Histogram counts every node, not only this page's, by its latest G.
	Histogram GoodnessHistogram `json:"histogram"`
	Nodes     []NodeStatus      `json:"nodes"`
}

// GoodnessHistogram counts nodes by their latest goodness: Counts[i]
// nodes have Edges[i] <= G < Edges[i+1] (the last bucket includes its
// upper edge). The edges are equally spaced in ln G over the Scale (G =
// e^(1+x), x the node's usage sum: linear in x). NoRecord nodes had no
// record in the window; MeanG is the mean over the others.
type GoodnessHistogram struct {
	Edges    []float64 `json:"edges"`
	Counts   []int     `json:"counts"`
	NoRecord int       `json:"no_record"`
	MeanG    *float64  `json:"mean_g"`
}

// NodeStatus is one node of GET /v1/nodes.
type NodeStatus struct {
	Name     string         `json:"name"`
	Capacity queue.Capacity `json:"capacity"`
	Free     queue.Capacity `json:"free"`
	// Containers counts every application's containers on the node.
	Containers int `json:"containers"`
	// Apps are the applications with containers on the node, most
	// containers first, at most MaxNodeApps of them (AppsTotal in all).
	Apps      []NodeApp `json:"apps"`
	AppsTotal int       `json:"apps_total"`
	// Goodness is the node's latest goodness record in the window; null
	// when it has none. G is the goodness of the record's usage (Eq. 1,
	// in [e, e⁴]), what the node is coloured by; the record's own "g" is
	// the reward the learner was credited, which with
	// learning.pair_reward residual is that goodness minus the profiles'
	// prediction. G is null without a record or when the daemon knows no
	// limits to score with.
	Goodness *journal.GoodnessRecord `json:"goodness"`
	G        *float64                `json:"g"`
}

// MaxNodeApps bounds NodeStatus.Apps; MaxAppNodes bounds ClusterApp.Nodes.
const (
	MaxNodeApps = 20
	MaxAppNodes = 50
)

// NodeApp is one application's containers on one node.
type NodeApp struct {
	AppID      string `json:"app_id"`
	JobID      string `json:"job_id,omitempty"` // "" for an application colocd did not submit
	Kind       string `json:"kind,omitempty"`
	User       string `json:"user,omitempty"`
	Containers int    `json:"containers"`
}

// ClusterStatus is the body of GET /v1/cluster: the cluster's totals and
// its running applications (colocd's and others') with the nodes they
// occupy, as the engine last read them.
type ClusterStatus struct {
	Available bool           `json:"available"` // as in NodeList
	ReadAt    *time.Time     `json:"read_at,omitempty"`
	Capacity  queue.Capacity `json:"capacity"`
	Free      queue.Capacity `json:"free"`
	Nodes     int            `json:"nodes"`
	// Total is the number of applications (or of those of ?jobs=); Apps
	// holds a page of them from Offset on, by application id.
	Total  int          `json:"total"`
	Offset int          `json:"offset"`
	Apps   []ClusterApp `json:"apps"`
}

// ClusterApp is one running application of GET /v1/cluster.
type ClusterApp struct {
	AppID      string         `json:"app_id"`
	JobID      string         `json:"job_id,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	User       string         `json:"user,omitempty"`
	Queue      string         `json:"queue,omitempty"`
	Alloc      queue.Capacity `json:"alloc"`
	Starts     *time.Time     `json:"starts,omitempty"`
	Containers int            `json:"containers"`
	// Nodes are where its containers run, most first, at most MaxAppNodes
	// (NodesTotal in all).
	Nodes      []AppNode `json:"nodes"`
	NodesTotal int       `json:"nodes_total"`
}

// AppNode is one node an application occupies.
type AppNode struct {
	Node       string `json:"node"`
	Containers int    `json:"containers"`
}

// GoodnessTrend is the body of GET /v1/goodness/trend: the node
// observations of [From, To) in equal time buckets, each the goodness of
// the node's usage (as NodeStatus.G), counted once per node and learning
// tick.
type GoodnessTrend struct {
	From          time.Time     `json:"from"`
	To            time.Time     `json:"to"`
	BucketSeconds float64       `json:"bucket_seconds"`
	Total         int           `json:"total"` // node observations in the window
	Scale         GoodnessScale `json:"scale"`
	Buckets       []TrendBucket `json:"buckets"` // every bucket, oldest first
}

// TrendBucket is one time bucket of a GoodnessTrend: the records with
// From <= at < From + bucket_seconds. The statistics are null when Count
// is 0.
type TrendBucket struct {
	From  time.Time `json:"from"`
	Count int       `json:"count"`
	MeanG *float64  `json:"mean_g"`
	MinG  *float64  `json:"min_g"`
	MaxG  *float64  `json:"max_g"`
}

// Summary is the body of GET /v1/summary: the run since this daemon
// started, in bounded reads.
type Summary struct {
	Now   time.Time `json:"now"`   // daemon clock
	Since time.Time `json:"since"` // when this daemon started, daemon clock
	// Counts is every job in the store by state (all runs, until
	// retention compacts finished jobs); SubmittedEver counts every job
	// the store ever took (compaction does not lower it).
	Counts        map[queue.State]int `json:"counts"`
	SubmittedEver uint64              `json:"submitted_ever"`
	Run           RunJobs             `json:"run"`
	Admissions    AdmissionCounts     `json:"admissions"`
	Goodness      GoodnessStats       `json:"goodness"`
	// Degraded lists the dependencies failing now (empty: none).
	Degraded []Degraded `json:"degraded"`
	// FIFO, on the simulator, compares this run's jobs with the same jobs
	// under first-in-first-out admission, from the last time the queue
	// drained; absent before that, and on YARN.
	FIFO *FIFOComparison `json:"fifo,omitempty"`
}

// FIFOComparison is the simulator demo's point: the jobs that succeeded
// since the daemon started, against the same jobs simulated again from
// the same arrivals under FIFO admission (simulated seconds). A gain is
// the share of FIFO's figure that colocd saved (negative: it lost).
type FIFOComparison struct {
	Jobs                int     `json:"jobs"`
	MeanJCTSeconds      float64 `json:"mean_jct_seconds"` // completion time: arrival to finish
	FIFOMeanJCTSeconds  float64 `json:"fifo_mean_jct_seconds"`
	JCTGainPercent      float64 `json:"jct_gain_percent"`
	MakespanSeconds     float64 `json:"makespan_seconds"` // the first arrival to the last finish
	FIFOMakespanSeconds float64 `json:"fifo_makespan_seconds"`
	MakespanGainPercent float64 `json:"makespan_gain_percent"`
}

// Degraded is a dependency colocd cannot reach or use, served by
// /readyz, GET /v1/summary and the status page's banner.
type Degraded struct {
	// Dependency is cluster (the ResourceManager), metrics (the metrics
	// store), kdc (the Kerberos KDC) or disk (data_dir below its reserve).
	Dependency string `json:"dependency"`
	// Since is when its current run of failures began (wall time).
	Since time.Time `json:"since"`
	// Op is the call that failed last (sync, submit, metrics, space…).
	Op string `json:"op"`
	// Error is that call's error; only to an authenticated caller.
	Error string `json:"error,omitempty"`
}

// RunJobs describes the jobs submitted since Summary.Since: read newest
// first, at most MaxSummaryJobs of them (Complete false when there were
// more: the figures then cover the newest Scanned).
type RunJobs struct {
	Scanned  int  `json:"scanned"`
	Complete bool `json:"complete"`
	// States counts them by their state now.
	States map[queue.State]int `json:"states"`
	// Admitted counts those admitted at least once; MeanWaitSeconds is
	// their mean wait from submission to (last) admission.
	Admitted        int      `json:"admitted"`
	MeanWaitSeconds *float64 `json:"mean_wait_seconds"`
	// MeanRuntimeSeconds is the mean runtime (running to finished) of
	// those that succeeded.
	MeanRuntimeSeconds *float64 `json:"mean_runtime_seconds"`
}

// MaxSummaryJobs and MaxSummaryDecisions bound what GET /v1/summary reads.
const (
	MaxSummaryJobs      = 5000
	MaxSummaryDecisions = 5000
)

// AdmissionCounts are the admissions journaled since Summary.Since: the
// journal keeps a bounded ring (journal.decisions), of which at most
// MaxSummaryDecisions are read; Scanned are counted, the oldest at Oldest
// (null when none).
type AdmissionCounts struct {
	Scanned int        `json:"scanned"`
	Oldest  *time.Time `json:"oldest"`
	// Chosen: drawn from the learned distribution; Forced: by a rule,
	// keyed "max_skips" (a job passed over too often) or "reservation"
	// (the job holding the reservation).
	Chosen int            `json:"chosen"`
	Forced map[string]int `json:"forced"`
	// Shadow counts the decisions of shadow mode (FIFO admitted).
	Shadow int `json:"shadow"`
}

// GoodnessStats summarise the node observations since Summary.Since (as
// GoodnessTrend counts them).
type GoodnessStats struct {
	Count int           `json:"count"`
	MeanG *float64      `json:"mean_g"`
	MinG  *float64      `json:"min_g"`
	MaxG  *float64      `json:"max_g"`
	Scale GoodnessScale `json:"scale"`
}

// WhoAmI is the body of GET /v1/whoami: who the server takes the caller
// for.
type WhoAmI struct {
	User      string   `json:"user"` // acts as (the user of its jobs)
	Role      string   `json:"role"`
	RoleRule  string   `json:"role_rule,omitempty"` // what granted Role
	Groups    []string `json:"groups"`
	Principal string   `json:"principal"` // as authenticated
	Method    string   `json:"method"`    // token, kerberos or tls
	RealUser  string   `json:"real_user,omitempty"`
	ProxyRule string   `json:"proxy_rule,omitempty"`
}
