package pipeline

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/colocd/colocd/queue"
)

// Capacity is an amount of cluster resources.
type Capacity struct {
	MemoryMB int64 `json:"memory_mb"`
	VCores   int64 `json:"vcores"`
}

// NodeFree is one node's free resources and, for the co-location model,
// its capacity and the jobs with containers on it.
type NodeFree struct {
	Name     string    `json:"name"`
	Free     Capacity  `json:"free"`
	Capacity Capacity  `json:"capacity"`
	Jobs     []NodeJob `json:"jobs,omitempty"`
}

// NodeJob is one job's containers on a node.
type NodeJob struct {
	JobID      string `json:"job_id"`
	Kind       string `json:"kind"`
	Containers int    `json:"containers"`
}

// Running is one application on the cluster, as the daemon sees it.
type Running struct {
	JobID string   `json:"job_id"`
	Kind  string   `json:"kind"`
	User  string   `json:"user"`
	Queue string   `json:"queue"`
	Alloc Capacity `json:"alloc"`
	// Started is when its application started (zero: unknown).
	Started time.Time `json:"started,omitzero"`
	// Weight of this job in the preference context: how likely the next
	// job's containers land beside it (the daemon: its nodes' share of the
	// free slots left once empty nodes are filled). 0 everywhere: no context.
	Weight float64 `json:"weight"`
}

// Snapshot is everything one decision reads. The pipeline never reads a
// clock, the store or the network: the daemon gathers this, then decides.
type Snapshot struct {
	Now      time.Time
	Capacity Capacity // whole cluster
	Free     Capacity // whole cluster
	Nodes    []NodeFree
	Running  []Running
	// Pending is the FIFO head (Store.Pending(window)), oldest first.
	Pending []queue.Job
	// PendingTotal is how many jobs are pending in all, window or not (0:
	// unknown; the tail stage then does nothing).
	PendingTotal int
	History      map[string]queue.KindHistory
}

// Preferences gives the co-location preference distribution: out[i] is the
// probability of candidates[i] given the running kinds, mixed by weights.
// bandit.Learner satisfies it.
type Preferences interface {
	Mix(candidates, given []string, weights []float64, out []float64)
}

// Scorer is the co-location model (preference.mode "model"): for each
// candidate kind and its containers, the predicted value of admitting one
// job of it now, higher is better, with its explanation. It reads only the
// snapshot. The daemon's scorer predicts where the containers land and what
// they do to those nodes from the learned resource profiles, corrected by
// the pair preferences.
type Scorer interface {
	Score(snap *Snapshot, kinds []string, res []queue.Resources, out []Score)
}

// Planner is the lookahead (LookaheadConfig): for each candidate (a job
// id of the snapshot's pending window) it predicts the value of admitting
// it now and deciding by the one-step rule after it, on a model of the
// cluster built from the snapshot and what was learned: one value per
// sampled future, the same futures for every candidate, higher is better.
// seed draws the futures. An error means the model cannot tell (the
// one-step choice stands).
type Planner interface {
	Plan(snap *Snapshot, cands []string, seed uint64) ([]PlanOutcome, error)
}

// PlanOutcome is one candidate's predicted values, one per sampled
// future; Fits is false when it found no room in the model.
type PlanOutcome struct {
	Values []float64
	Fits   bool
}

// Score is one candidate kind's model score and its explanation.
type Score struct {
	// Value is what the choice maximises (Model + Correction).
	Value float64 `json:"value"`
	// Model is the profiles' prediction; Correction the pair preferences'
	// adjustment.
	Model      float64 `json:"model"`
	Correction float64 `json:"correction,omitempty"`
	// Size is the factor the job's size multiplied Model by (its
	// containers to the scorer's size weight, while the queue drains); 0
	// when its size did not count.
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

// observationCounter is optionally implemented by Preferences (bandit.Learner
// does): how many observations have updated the preferences given a running
// kind. Select's anneal mode samples while the context's rows have fewer
// than select.explore_observations and takes the argmax after; preferences
// without it count as never observed (anneal always samples).
type observationCounter interface {
	RowObservations(given string) int64
}

// Decision is the outcome of one Decide and the explanation of it: what each
// stage kept and dropped and why, the final distribution, and the jobs that
// were passed over (give Passed to Store.Admit so their skips grow).
type Decision struct {
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
	// Passed: jobs that survived Fit and were ahead of Chosen in the FIFO.
	Passed []string `json:"passed"`
	// Blocked: the oldest job of the window ahead of Chosen that did not
	// fit, if any (give it to Store.Admit so its Blocked count grows).
	Blocked []string `json:"blocked,omitempty"`
	// Reserved is the job holding a reservation (ReservationConfig), if
	// any: nothing else is admitted until it is.
	Reserved string        `json:"reserved,omitempty"`
	Groups   []GroupRecord `json:"groups,omitempty"`
	// Queues are the service queues (fairness mode curves): what each
	// was entitled to, held and was owed at this decision.
	Queues []QueueRecord `json:"queues,omitempty"`
	// Lookahead is the lookahead's prediction for each candidate it rolled
	// out, the one-step choice first.
	Lookahead []lookaheadRecord `json:"lookahead,omitempty"`
}

// lookaheadRecord is one rolled-out candidate: the mean of its predicted
// values and, against the one-step choice, the mean paired difference and
// its standard error.
type lookaheadRecord struct {
	JobID  string  `json:"job_id"`
	Kind   string  `json:"kind"`
	Value  float64 `json:"value"`
	Diff   float64 `json:"diff"`
	StdErr float64 `json:"std_err"`
	Fits   bool    `json:"fits"`
}

// ContextKind is one running kind in the preference context.
type ContextKind struct {
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
}

// StageRecord is what one stage did.
type StageRecord struct {
	Name    string `json:"name"`
	In      int    `json:"in"`
	Out     int    `json:"out"`
	Dropped []Drop `json:"dropped,omitempty"`
	// Omitted counts drops beyond Config.MaxRecorded.
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

// GroupRecord is one fairness group at decision time.
type GroupRecord struct {
	Group   string  `json:"group"`
	Weight  float64 `json:"weight"`
	Share   float64 `json:"share"`   // of the running allocation, in capacity units
	Deficit float64 `json:"deficit"` // before this decision
	Pending int     `json:"pending"` // jobs in the window
}

// Pipeline runs the ordering stages. It keeps the fairness counters between
// decisions and scratch buffers; Decide is serialised by a mutex.
type Pipeline struct {
	cfg     Config
	prefs   Preferences
	scorer  Scorer
	planner Planner
	stages  []stage
	fair    *fairnessStage // nil when fairness is off

	mu      sync.Mutex
	scratch scratch
}

// stage is one step of the pipeline. Filter stages shrink r.live; scoring
// stages build and reweight r.cands.
type stage interface {
	name() string
	run(r *run, rec *StageRecord)
}

// New validates cfg and wires the stages. A nil prefs acts as an
// untrained learner: every kind equally likely. Preference mode "model"
// needs a Scorer: give it with WithScorer.
func New(cfg Config, prefs Preferences, opts ...Option) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxRecorded == 0 {
		cfg.MaxRecorded = 32
	}
	if cfg.Fairness.Weights != nil {
		w := make(map[string]float64, len(cfg.Fairness.Weights))
		for k, v := range cfg.Fairness.Weights {
			w[k] = v
		}
		cfg.Fairness.Weights = w
	}
	p := &Pipeline{cfg: cfg, prefs: prefs}
	for _, o := range opts {
		o(p)
	}
	if cfg.Preference.Enabled && cfg.Preference.Mode == PreferenceModel && p.scorer == nil {
		return nil, fieldErr("preference.mode", "model needs a scorer (WithScorer)")
	}
	if cfg.Lookahead.Enabled && p.planner == nil {
		return nil, fieldErr("lookahead.enabled", "needs a planner (WithPlanner)")
	}
	p.stages = p.stack()
	return p, nil
}

// Option configures a Pipeline.
type Option func(*Pipeline)

// WithScorer gives the pipeline its co-location model (preference mode
// "model").
func WithScorer(s Scorer) Option { return func(p *Pipeline) { p.scorer = s } }

// WithPlanner gives the pipeline its lookahead's model (LookaheadConfig).
func WithPlanner(pl Planner) Option { return func(p *Pipeline) { p.planner = pl } }

// stack composes the stages, in order. This is the one place the pipeline
// is wired (like nomad's scheduler/stack.go).
func (p *Pipeline) stack() []stage {
	c := p.cfg
	var s []stage
	// 1. Window: only the first n pending jobs compete (paper §4.1); the
	//    rest keep their FIFO place.
	if c.Window.Enabled {
		s = append(s, windowStage{size: c.Window.Size})
	}
	// 2. Fit: drop jobs whose reservation does not fit the free resources,
	//    in total and, given nodes, container by container (paper §5.2).
	if c.Fit.Enabled {
		s = append(s, fitStage{perNode: c.Fit.PerNode})
	}
	// 3. Fairness: DRF shares and Graphene deficit counters; past κ only
	//    the most-starved group's jobs stay.
	if c.Fairness.Enabled {
		p.fair = newFairnessStage(c.Fairness)
		s = append(s, p.fair)
	}
	// 4. Altruism: deadline jobs yield only while they have slack, with
	//    probability P (Carbyne §3.4.2); jobs out of slack go first.
	if c.Altruism.Enabled {
		s = append(s, altruismStage{p: c.Altruism})
	}
	// 4b. Reservation: the oldest job blocked after_blocked times for not
	//     fitting goes next; until it fits nothing else goes.
	if c.Reservation.Enabled {
		s = append(s, reservationStage{after: c.Reservation.AfterBlocked, perNode: c.Fit.Enabled && c.Fit.PerNode})
	}
	// 4c. Tail: at the end of a draining queue, a job that would finish
	//     alone after all the others goes first (longest first).
	if c.Tail.Enabled {
		t := tailStage{margin: c.Tail.Margin}
		if c.Starvation.Enabled {
			t.maxSkips, t.maxWait = c.Starvation.MaxSkips, c.Starvation.MaxWait
		}
		s = append(s, t)
	}
	// 5. Co-location preference. Mode model: the scorer predicts what each
	//    kind's job would do to the nodes it lands on (profiles, corrected
	//    by the pair preferences) and π is the softmax of the scores over
	//    the temperature. Mode bandit (the paper): π(kind | running kinds)
	//    from the learner. A kind's probability goes to its oldest job.
	//    Off: FIFO head.
	switch {
	case c.Preference.Enabled && c.Preference.Mode == PreferenceModel:
		s = append(s, modelStage{scorer: p.scorer, temperature: c.Preference.Temperature, observeWait: c.Preference.ObserveWait,
			heads: headsOf(c.Preference)})
	case c.Preference.Enabled:
		s = append(s, preferenceStage{prefs: p.prefs, heads: headsOf(c.Preference)})
	default:
		s = append(s, fifoStage{})
	}
	// 5b. Lookahead: the top candidates rolled out on a model of the
	//     cluster; one predicted better than the one-step choice by a
	//     margin takes its place.
	if c.Lookahead.Enabled && c.Preference.Enabled && c.Preference.Mode == PreferenceModel {
		s = append(s, lookaheadStage{planner: p.planner, topK: c.Lookahead.TopK, margin: c.Lookahead.Margin, minGain: c.Lookahead.MinGain})
	}
	// 6. Starvation: weight by skips and renormalise (paper §4.3); past
	//    max_skips the oldest such job is forced through.
	if c.Starvation.Enabled {
		s = append(s, starvationStage{c: c.Starvation})
	}
	// 7. Select: sample from the distribution (the paper) or argmax. Off:
	//    the oldest candidate.
	if c.Select.Enabled {
		s = append(s, selectStage{c: c.Select, prefs: p.prefs})
	}
	return s
}

// cand is one job moving through a decision.
type cand struct {
	job *queue.Job
	idx int // FIFO position in the window
	// Copied from the job, so that stages scan small structs.
	kind     string
	res      queue.Resources
	deadline *time.Time
	skips    int

	group  string
	slack  time.Duration // valid when job.Deadline != nil
	pref   float64
	weight float64
	prob   float64
	score  *Score // model mode
}

// scratch holds buffers reused across decisions.
type scratch struct {
	cands             []cand
	window, fit, live []*cand
	spare, kindHeads  []*cand
	largestHeads      []*cand // each kind's largest live job (within_kind largest)
	kinds, ctxKinds   []string
	ctxWeights, out   []float64
	kindIdx           map[string]int
	shapeFit          *shapeMemo
}

// run is the state of one decision.
type run struct {
	p    *Pipeline
	cfg  *Config
	snap *Snapshot
	rng  *rand.Rand
	dec  *Decision
	sc   *scratch

	window []*cand // the window, FIFO order
	fit    []*cand // survivors of Fit: every job that could have gone now
	live   []*cand // survivors so far, FIFO order
	cut    *cand   // first deadline job that will not yield, or nil
	// firstNoFit is the oldest job the fit stage dropped, or nil;
	// overdue lists, in FIFO order, the window jobs blocked
	// Reservation.AfterBlocked times (found by load, usually none).
	firstNoFit *cand
	overdue    []*cand
	cands      []*cand // the distribution (set by preference/fifo stage)
	chosen     *cand
	note       string // why nothing was chosen

	pendingTotal int // jobs in the snapshot, before the window
}

// room reports whether rec can hold another drop record; if not it counts
// the drop as omitted.
func (r *run) room(rec *StageRecord) bool {
	if len(rec.Dropped) < r.cfg.MaxRecorded {
		return true
	}
	rec.Omitted++
	return false
}

// beginFilter returns an empty slice to collect the survivors into;
// endFilter installs it as r.live.
func (r *run) beginFilter() []*cand { return r.sc.spare[:0] }

func (r *run) endFilter(kept []*cand) {
	r.sc.spare, r.sc.live = r.live[:0], kept
	r.live = kept
}

// Decide runs the stages over snap and returns the decision. It reads
// nothing but snap, the fairness counters and rng; with fairness on it
// charges the chosen job to its group. A nil rng means no randomness:
// deadline jobs never yield and Select takes the argmax.
func (p *Pipeline) Decide(snap Snapshot, rng *rand.Rand) Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	dec := Decision{At: snap.Now, Stages: make([]StageRecord, 0, len(p.stages))}
	r := &run{p: p, cfg: &p.cfg, snap: &snap, rng: rng, dec: &dec, sc: &p.scratch}
	r.load()
	for _, s := range p.stages {
		rec := StageRecord{Name: s.name(), In: r.size()}
		s.run(r, &rec)
		rec.Out = r.size()
		if rec.Out == 0 && r.note == "" && r.chosen == nil && len(r.cands) == 0 {
			r.note = s.name() + ": " + emptyReason(rec)
		}
		dec.Stages = append(dec.Stages, rec)
	}
	if r.chosen == nil && len(r.cands) > 0 {
		// Select is off: the oldest candidate goes.
		r.chosen = r.cands[0]
	}
	r.finish()
	return dec
}

// size is how many jobs are still in play: candidates once scoring began,
// survivors before.
func (r *run) size() int {
	if r.cands != nil {
		return len(r.cands)
	}
	return len(r.live)
}

func emptyReason(rec StageRecord) string {
	if rec.Note != "" {
		return rec.Note
	}
	if rec.In == 0 {
		return "no jobs"
	}
	return "dropped every job"
}

// load turns the snapshot's pending jobs into candidates, in FIFO order.
func (r *run) load() {
	pend := r.snap.Pending
	r.pendingTotal = len(pend)
	if w := r.cfg.Window; w.Enabled && len(pend) > w.Size {
		// Only the window is ever looked at; the window stage records the cut.
		if !fifoOrdered(pend) {
			pend = sortedFIFO(pend)
		}
		if f := r.p.fair; f != nil {
			pend = f.windows(pend, w.Size)
		} else {
			pend = pend[:w.Size]
		}
	}
	sc := r.sc
	if cap(sc.cands) < len(pend) {
		sc.cands = make([]cand, len(pend))
		sc.window = make([]*cand, 0, len(pend))
		sc.fit = make([]*cand, 0, len(pend))
		sc.live = make([]*cand, 0, len(pend))
		sc.spare = make([]*cand, 0, len(pend))
	}
	// One pass over the jobs (the memory they sit in is the cost here):
	// copy what the stages read and check the FIFO order on the way.
	rsv := r.cfg.Reservation
	for fill := true; fill; {
		fill = false
		sc.cands = sc.cands[:len(pend)]
		r.window = sc.window[:0]
		r.overdue = nil
		for i := range pend {
			j := &pend[i]
			if i > 0 && jobOrder(&pend[i-1], j) > 0 {
				pend, fill = sortedFIFO(pend), true
				break
			}
			sc.cands[i] = cand{job: j, idx: i, kind: j.Kind, res: j.Resources, deadline: j.Deadline, skips: j.Skips}
			r.window = append(r.window, &sc.cands[i])
			if rsv.Enabled && j.Blocked >= rsv.AfterBlocked {
				r.overdue = append(r.overdue, &sc.cands[i])
			}
		}
	}
	sc.window = r.window
	r.fit = append(sc.fit[:0], r.window...)
	sc.fit = r.fit
	r.live = append(sc.live[:0], r.window...)
	sc.live = r.live
	if len(pend) == 0 {
		r.note = "queue empty"
	}
}

// blockedJob is the job the chosen one overtakes while it does not fit:
// the oldest such window job that would fit the idle cluster (a reservation
// could go to it; one that never fits must not absorb the count), or nil.
// Only one job is blocked per admission, so Store.Admit's writes stay
// bounded however large the window.
func (r *run) blockedJob() *cand {
	if r.firstNoFit == nil || r.firstNoFit.idx >= r.chosen.idx {
		return nil
	}
	nodes := r.fitNodes(r.cfg.Fit.PerNode)
	for _, c := range r.window[r.firstNoFit.idx:r.chosen.idx] {
		if !r.fits(c) {
			if ok, _ := fitsIn(c.res, r.snap.Capacity, nodes, true, nil, false); ok {
				return c
			}
		}
	}
	return nil
}

// fits reports whether c survived the fit stage (r.fit is in FIFO order).
func (r *run) fits(c *cand) bool {
	_, ok := slices.BinarySearchFunc(r.fit, c.idx, func(f *cand, idx int) int { return f.idx - idx })
	return ok
}

// sortedFIFO returns a sorted copy of jobs.
func sortedFIFO(jobs []queue.Job) []queue.Job {
	jobs = slices.Clone(jobs)
	slices.SortStableFunc(jobs, func(a, b queue.Job) int { return jobOrder(&a, &b) })
	return jobs
}

// fifoOrdered reports whether jobs are in FIFO order (by Seq, then ID).
func fifoOrdered(jobs []queue.Job) bool {
	for i := 1; i < len(jobs); i++ {
		if jobOrder(&jobs[i-1], &jobs[i]) > 0 {
			return false
		}
	}
	return true
}

func jobOrder(a, b *queue.Job) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// finish fills in the chosen job, the candidates, Passed, and charges the
// fairness counters.
func (r *run) finish() {
	d := r.dec
	lim := r.cfg.MaxRecorded
	for _, c := range r.cands {
		if len(d.Candidates) >= lim && c != r.chosen {
			continue
		}
		d.Candidates = append(d.Candidates, Candidate{
			JobID: c.job.ID, Kind: c.kind, Prob: c.prob, Pref: c.pref, Weight: c.weight, Skips: c.skips, Score: c.score,
		})
	}
	if r.chosen == nil {
		if r.note == "" {
			r.note = "no candidate"
		}
		d.Note = r.note
		return
	}
	d.Chosen, d.ChosenKind = r.chosen.job.ID, r.chosen.job.Kind
	n, _ := slices.BinarySearchFunc(r.fit, r.chosen.idx, func(c *cand, idx int) int { return c.idx - idx })
	if n > 0 {
		d.Passed = make([]string, n)
		for i, c := range r.fit[:n] {
			d.Passed[i] = c.job.ID
		}
	}
	if c := r.blockedJob(); c != nil {
		d.Blocked = []string{c.job.ID}
	}
	if r.p.fair != nil {
		r.p.fair.charge(r)
	}
}
