package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// curvesRule is the fairness stage's curves mode, the draft's ALLOCATE
// (§3, "Resource Allocation") at admission level: colocd admits one job
// per decision, and a queue's service is the allocation of its running
// applications over time.
//
//  1. Owed service, by level: a guaranteed queue is owed when the rate its
//     curve entitles it to now, Y (curveBook.entitled), exceeds what it
//     holds. From level 1 down, the first level with an owed queue that
//     has a job that fits keeps only those queues' jobs. A hard queue
//     (level 1) whose jobs do not fit yet holds the cluster: nothing else
//     goes while something runs, so its room frees up. A soft queue holds
//     nothing.
//  2. Leftover, by DRF: the elastic groups' jobs (queues that failed
//     admission control, queues with no curve and groups in no queue);
//     the deficit counters and κ bound apply among them as in deficit
//     mode.
//  3. What remains, by strict priority: when no elastic job fits, the
//     guaranteed queues' jobs of the highest level with one that fits.
//
// Within what is kept, the later stages order as always (FIFO or the
// learned order). Deviations from the draft: a whole job is admitted even
// when it needs more than the queue is owed (the overshoot counts as
// service, so the queue is owed less later); queues at one level share
// step 3 through the later stages rather than round-robin per period T;
// the allocation held between two decisions is booked as constant.
type curvesRule struct {
	period time.Duration
	queues []ServiceQueue
	adm    []queueAdmission
	order  []int             // queue indexes by level, then configuration order
	index  map[string]int    // queue name → index
	member map[string]string // group → queue name
	book   *curveBook

	// per decision
	held           map[string][2]float64 // the configured queues' allocations
	entitled, owed [][2]float64          // by queue index
	keepRoom       bool                  // FairnessConfig.KeepRoom
}

func newCurvesRule(c FairnessConfig) *curvesRule {
	r := &curvesRule{
		period: c.BurstPeriod, queues: slices.Clone(c.Queues),
		adm:   admitQueues(c.Queues, c.BurstPeriod),
		order: sortedQueues(c.Queues), index: map[string]int{}, member: map[string]string{},
		book: newCurveBook(c.BurstPeriod, c.Slot), held: map[string][2]float64{},
		entitled: make([][2]float64, len(c.Queues)), owed: make([][2]float64, len(c.Queues)),
		keepRoom: c.KeepRoom,
	}
	for i, q := range c.Queues {
		r.index[q.Name] = i
		r.member[q.Name] = q.Name
		for _, m := range q.Members {
			r.member[m] = q.Name
		}
	}
	return r
}

// queueOf is the queue serving group g, or g itself.
func (r *curvesRule) queueOf(g string) string {
	if q, ok := r.member[g]; ok {
		return q
	}
	return g
}

// guaranteed reports whether group (a queue name) has a guarantee.
func (r *curvesRule) guaranteed(g string) bool {
	i, ok := r.index[g]
	return ok && r.adm[i].Guarantee != GuaranteeElastic
}

// account books the allocation held since the last decision and computes
// each guaranteed queue's entitlement and what it is owed now.
func (r *curvesRule) account(now time.Time, alloc map[string][2]float64) {
	clear(r.held)
	for _, q := range r.queues {
		if a, ok := alloc[q.Name]; ok {
			r.held[q.Name] = a
		}
	}
	r.book.advance(now, r.held)
	for i, q := range r.queues {
		r.entitled[i], r.owed[i] = [2]float64{}, [2]float64{}
		if r.adm[i].Guarantee == GuaranteeElastic {
			continue
		}
		y := r.book.entitled(q, now)
		r.entitled[i] = y
		h := alloc[q.Name]
		for k := range 2 {
			r.owed[i][k] = max(y[k]-h[k], 0)
		}
	}
}

const owedEpsilon = 1e-9

func (r *curvesRule) isOwed(i int) bool {
	return r.owed[i][0] > owedEpsilon || r.owed[i][1] > owedEpsilon
}

// serveOwed is step 1; it reports whether it decided what stays.
func (r *curvesRule) serveOwed(x *run, pending map[string]int, rec *StageRecord) bool {
	for lo := 0; lo < len(r.order); {
		level := r.queues[r.order[lo]].Level
		hi := lo
		var owed []string
		hard := false
		for ; hi < len(r.order) && r.queues[r.order[hi]].Level == level; hi++ {
			i := r.order[hi]
			if r.adm[i].Guarantee != GuaranteeElastic && r.isOwed(i) && pending[r.queues[i].Name] > 0 {
				owed = append(owed, r.queues[i].Name)
				hard = hard || r.adm[i].Guarantee == GuaranteeHard
			}
		}
		lo = hi
		if len(owed) == 0 {
			continue
		}
		in := func(c *cand) bool { return slices.Contains(owed, c.group) }
		why := r.owedText(owed)
		if slices.ContainsFunc(x.live, in) {
			rec.Note = fmt.Sprintf("level %d owed by its curve: %s; only its jobs stay", level, why)
			x.keepIf(in, rec, fmt.Sprintf("level %d is owed first (%s)", level, strings.Join(owed, ", ")))
			if r.keepRoom {
				r.keepNoLarger(x, rec, "larger than its queue's oldest job: the learned order does not make the queue's older jobs wait for a bigger one")
			}
			return true
		}
		if hard && len(x.snap.Running) > 0 && r.fitsIdle(x, in) {
			rec.Note = fmt.Sprintf("hard queue owed by its curve: %s; none of its jobs fits yet, nothing else goes", why)
			x.keepIf(func(*cand) bool { return false }, rec, fmt.Sprintf("hard level %d waits for room (%s)", level, strings.Join(owed, ", ")))
			x.note = rec.Note
			return true
		}
	}
	return false
}

// fitsIdle reports whether a window job accepted by in would fit the idle
// cluster: waiting for room is useless otherwise.
func (r *curvesRule) fitsIdle(x *run, in func(*cand) bool) bool {
	for _, c := range x.window {
		if in(c) {
			if ok, _ := FitsCluster(c.res, x.snap.Capacity, x.fitNodes(x.cfg.Fit.PerNode)); ok {
				return true
			}
		}
	}
	return false
}

func (r *curvesRule) owedText(names []string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		o := r.owed[r.index[n]]
		parts = append(parts, fmt.Sprintf("%s (memory %.3f, vcores %.3f)", n, o[0], o[1]))
	}
	return strings.Join(parts, ", ")
}

// keepElastic is step 2's filter: when an elastic group has a live job,
// only elastic jobs stay and it reports true. With keepRoom, while a
// guaranteed queue could still burst (it holds less than α), an elastic
// job stays only if it is no larger than its group's oldest live job.
func (r *curvesRule) keepElastic(x *run, rec *StageRecord) bool {
	elastic := func(c *cand) bool { return !r.guaranteed(c.group) }
	if !slices.ContainsFunc(x.live, elastic) {
		return false
	}
	if slices.ContainsFunc(x.live, func(c *cand) bool { return !elastic(c) }) {
		x.keepIf(elastic, rec, "its queue has received its curve: the leftover goes to elastic groups by DRF")
	}
	if r.keepRoom && r.roomAtStake() {
		r.keepNoLarger(x, rec, "larger than its group's oldest job while a guaranteed queue may burst: room kept as FIFO would keep it")
	}
	return true
}

// keepNoLarger keeps the live jobs that take no more vcores and memory
// than their group's oldest live job (the one FIFO within the group
// admits, which always stays).
func (r *curvesRule) keepNoLarger(x *run, rec *StageRecord, reason string) {
	head := map[string]*cand{} // each group's oldest live job: x.live is in FIFO order
	for _, c := range x.live {
		if _, ok := head[c.group]; !ok {
			head[c.group] = c
		}
	}
	noLarger := func(c *cand) bool {
		h := head[c.group]
		return c.res.TotalVCores() <= h.res.TotalVCores() && c.res.TotalMemoryMB() <= h.res.TotalMemoryMB()
	}
	if slices.ContainsFunc(x.live, func(c *cand) bool { return !noLarger(c) }) {
		x.keepIf(noLarger, rec, reason)
	}
}

// roomAtStake reports whether a guaranteed queue holds less than its burst
// rate α of some resource: its next burst needs room.
func (r *curvesRule) roomAtStake() bool {
	for i, q := range r.queues {
		if r.adm[i].Guarantee == GuaranteeElastic {
			continue
		}
		h := r.held[q.Name]
		if h[0] < q.Alpha.Memory-owedEpsilon || h[1] < q.Alpha.VCores-owedEpsilon {
			return true
		}
	}
	return false
}

// strictPriority is step 3: the live jobs of the highest level.
func (r *curvesRule) strictPriority(x *run, rec *StageRecord) {
	best := maxLevel + 1
	for _, c := range x.live {
		best = min(best, r.queues[r.index[c.group]].Level)
	}
	if best > maxLevel {
		return
	}
	rec.Note = fmt.Sprintf("no elastic job fits: the guaranteed queues' leftover by strict priority, level %d", best)
	x.keepIf(func(c *cand) bool { return r.queues[r.index[c.group]].Level == best }, rec,
		fmt.Sprintf("strict priority: level %d goes first", best))
}

// keepIf keeps the live jobs in accepts, recording reason for the others.
func (r *run) keepIf(in func(*cand) bool, rec *StageRecord, reason string) {
	kept := r.beginFilter()
	for _, c := range r.live {
		if in(c) {
			kept = append(kept, c)
		} else if r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, reason})
		}
	}
	r.endFilter(kept)
}

// QueueRecord is one service queue at decision time (curves mode): what
// its curve entitles it to, what it holds, what it is owed.
type QueueRecord struct {
	Queue     string    `json:"queue"`
	Level     int       `json:"level"`
	Guarantee guarantee `json:"guarantee"`
	Entitled  Rate      `json:"entitled"`
	Held      Rate      `json:"held"`
	Owed      Rate      `json:"owed"`
	Pending   int       `json:"pending"`
}

// record puts the configured queues into the decision.
func (r *curvesRule) record(x *run, alloc map[string][2]float64, pending map[string]int) {
	for _, i := range r.order {
		if len(x.dec.Queues) >= x.cfg.MaxRecorded {
			break
		}
		q := r.queues[i]
		x.dec.Queues = append(x.dec.Queues, QueueRecord{
			Queue: q.Name, Level: q.Level, Guarantee: r.adm[i].Guarantee,
			Entitled: rateOf(r.entitled[i]), Held: rateOf(alloc[q.Name]), Owed: rateOf(r.owed[i]),
			Pending: pending[q.Name],
		})
	}
}
