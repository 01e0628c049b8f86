package pipeline

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Service curves: the fairness stage's "curves" mode, after the long-term
// fair scheduler draft (shared/papers/long-term-fair-scheduler-draft.md,
// §3). Every amount is a share of the cluster's capacity per resource
// (memory, vcores), so the capacity C is 1 and service over time is in
// capacity·seconds.

// fairnessMode is how the fairness stage shares the cluster.
type fairnessMode string

// Fairness modes.
const (
	// FairnessDeficit bounds unfairness between groups with DRF deficit
	// counters (Graphene §5.1, or X-Flex's long-term deficits with a
	// half-life): see fairnessStage.
	FairnessDeficit fairnessMode = "deficit"
	// FairnessCurves serves configured queues by their service curves
	// first, the rest by DRF deficits, then by strict priority: see
	// curvesRule.
	FairnessCurves fairnessMode = "curves"
)

// Rate is an amount per resource as a share of the cluster's capacity.
type Rate struct {
	VCores float64 `json:"vcores" yaml:"vcores" mapstructure:"vcores"`
	Memory float64 `json:"memory" yaml:"memory" mapstructure:"memory"`
}

// vec is r as (memory, vcores), the order of the stage's allocations.
func (r Rate) vec() [2]float64 { return [2]float64{r.Memory, r.VCores} }

func rateOf(v [2]float64) Rate { return Rate{Memory: v[0], VCores: v[1]} }

// ServiceQueue is one queue of the curves mode: the groups it serves (YARN
// queues or users, as fairness.group_by says), its priority level and its
// service curve over the burst period T (FairnessConfig.BurstPeriod):
//
//	S(t) = Alpha·t for t < Burst, Beta·t for Burst ≤ t ≤ T
//
// with Alpha ≥ Beta per resource. Alpha = Beta (Burst 0) is a batch
// queue's steady guarantee; Alpha zero is no curve: the queue is elastic.
type ServiceQueue struct {
	// Name is the queue's name and the group it serves.
	Name string `json:"name" yaml:"name" mapstructure:"name"`
	// Members are further groups served as this queue (a user group, or
	// several YARN queues); a group belongs to one queue at most.
	Members []string `json:"members,omitempty" yaml:"members,omitempty" mapstructure:"members"`
	// Level is the priority level, 1 the highest.
	Level int  `json:"level" yaml:"level" mapstructure:"level"`
	Alpha Rate `json:"alpha" yaml:"alpha" mapstructure:"alpha"`
	// Beta zero means Alpha.
	Beta  Rate          `json:"beta" yaml:"beta" mapstructure:"beta"`
	Burst time.Duration `json:"burst" yaml:"burst" mapstructure:"burst"`
}

// maxLevel bounds ServiceQueue.Level.
const maxLevel = 16

// beta is Beta with zero meaning Alpha.
func (q ServiceQueue) beta() Rate {
	if q.Beta == (Rate{}) {
		return q.Alpha
	}
	return q.Beta
}

// Class is "latency-sensitive" for a queue whose burst rate exceeds its
// sustained rate, "batch" otherwise.
func (q ServiceQueue) Class() string {
	b := q.beta()
	if q.Alpha.VCores > b.VCores || q.Alpha.Memory > b.Memory {
		return "latency-sensitive"
	}
	return "batch"
}

// curve is S(d) per resource for a look-back of d seconds.
func (q ServiceQueue) curve(d float64) [2]float64 {
	r := q.Alpha
	if d >= q.Burst.Seconds() {
		r = q.beta()
	}
	v := r.vec()
	return [2]float64{v[0] * d, v[1] * d}
}

func (q ServiceQueue) validate(field string) error {
	if q.Name == "" {
		return fieldErr(field+".name", "required")
	}
	if q.Level < 1 || q.Level > maxLevel {
		return fieldErr(field+".level", "%d outside [1, %d]", q.Level, maxLevel)
	}
	for _, r := range []struct {
		key string
		v   float64
	}{{"alpha.vcores", q.Alpha.VCores}, {"alpha.memory", q.Alpha.Memory}, {"beta.vcores", q.Beta.VCores}, {"beta.memory", q.Beta.Memory}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fieldErr(field+"."+r.key, "%v outside [0, 1] (a share of the cluster)", r.v)
		}
	}
	b := q.beta()
	if b.VCores > q.Alpha.VCores || b.Memory > q.Alpha.Memory {
		return fieldErr(field+".beta", "%+v exceeds alpha %+v (α ≥ β)", b, q.Alpha)
	}
	if q.Burst < 0 {
		return fieldErr(field+".burst", "%v is negative", q.Burst)
	}
	if q.Class() == "latency-sensitive" && q.Burst == 0 {
		return fieldErr(field+".burst", "required when beta is below alpha")
	}
	return nil
}

// guarantee is what admission control granted a queue.
type guarantee string

// Guarantees (draft §3, "Admission Control").
const (
	// GuaranteeHard: admitted at the top level (1); owed service goes first
	// and the cluster holds room for it.
	GuaranteeHard guarantee = "hard"
	// GuaranteeSoft: admitted below the top level; owed service goes first
	// among the jobs that fit now, but the cluster holds no room for it.
	GuaranteeSoft guarantee = "soft"
	// GuaranteeElastic: best effort, shared by DRF.
	GuaranteeElastic guarantee = "elastic"
)

// queueAdmission is admission control's outcome for one queue.
type queueAdmission struct {
	Name      string    `json:"name"`
	Class     string    `json:"class"`
	Level     int       `json:"level"`
	Guarantee guarantee `json:"guarantee"`
	// Reason says why, with the numbers of the condition that decided.
	Reason string `json:"reason"`
}

// admitQueues is the draft's admission control over the configured queues,
// in their order (the order they arrived in): a queue with a curve is
// guaranteed when, with the queues already guaranteed at its level,
//
//	resource condition:  Σ α ≤ 1 per resource, and
//	fairness condition:  S(T) ≤ min(T − Σ S_j(T), T/(n+1)) per resource,
//
// where n counts those queues (the draft's note: n+1, the queue itself
// included). Guaranteed at level 1 is hard, below soft; a queue failing
// either condition, or with no curve, is elastic.
func admitQueues(qs []ServiceQueue, period time.Duration) []queueAdmission {
	T := period.Seconds()
	levels := map[int]*levelSum{}
	out := make([]queueAdmission, 0, len(qs))
	for _, q := range qs {
		a := queueAdmission{Name: q.Name, Class: q.Class(), Level: q.Level, Guarantee: GuaranteeElastic}
		out = append(out, admitOne(q, T, levels, &a))
	}
	return out
}

// levelSum is what the queues guaranteed at one level take: Σ α, Σ S(T)
// and their number.
type levelSum struct {
	alpha, st [2]float64
	n         int
}

func admitOne(q ServiceQueue, T float64, levels map[int]*levelSum, a *queueAdmission) queueAdmission {
	if q.Alpha == (Rate{}) {
		a.Reason = "no service curve: best effort"
		return *a
	}
	l := levels[q.Level]
	if l == nil {
		l = &levelSum{}
		levels[q.Level] = l
	}
	names := [2]string{"memory", "vcores"}
	al, st := q.Alpha.vec(), q.curve(T)
	for r := range 2 {
		if sum := l.alpha[r] + al[r]; sum > 1+1e-9 {
			a.Reason = fmt.Sprintf("resource condition fails on %s: Σα at level %d would be %.3g > 1 (the cluster)", names[r], q.Level, sum)
			return *a
		}
	}
	for r := range 2 {
		left, even := T-l.st[r], T/float64(l.n+1)
		if bound := math.Min(left, even); st[r] > bound+1e-9*T {
			a.Reason = fmt.Sprintf("fairness condition fails on %s: S(T) = %.3g·T > min(T − ΣS_j(T), T/%d) = %.3g·T", names[r], st[r]/T, l.n+1, bound/T)
			return *a
		}
	}
	for r := range 2 {
		l.alpha[r] += al[r]
		l.st[r] += st[r]
	}
	l.n++
	if q.Level == 1 {
		a.Guarantee = GuaranteeHard
	} else {
		a.Guarantee = GuaranteeSoft
	}
	a.Reason = fmt.Sprintf("resource and fairness conditions hold at level %d (%d guaranteed there)", q.Level, l.n)
	return *a
}

// curveBook is the service-curve accounting: what each queue received per
// time slot over the look-back window T, kept as a ring of slots.
type curveBook struct {
	slot time.Duration
	n    int // slots in T
	// cur is the absolute index (Unix time / slot) of the newest slot.
	cur    int64
	lastAt time.Time
	// held is each queue's allocation since lastAt (memory, vcores).
	held map[string][2]float64
	// recv is each queue's service per slot, in capacity·seconds, indexed
	// by absolute slot mod n.
	recv map[string][][2]float64
}

func newCurveBook(period, slot time.Duration) *curveBook {
	n := max(int(period/slot), 1)
	return &curveBook{slot: slot, n: n, held: map[string][2]float64{}, recv: map[string][][2]float64{}}
}

func (b *curveBook) index(t time.Time) int64 {
	return floorDiv(t.UnixNano(), int64(b.slot))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func (b *curveBook) ring(q string) [][2]float64 {
	r, ok := b.recv[q]
	if !ok {
		r = make([][2]float64, b.n)
		b.recv[q] = r
	}
	return r
}

func (b *curveBook) pos(idx int64) int {
	return int(((idx % int64(b.n)) + int64(b.n)) % int64(b.n))
}

// advance books the allocation held since the last call up to now, then
// records alloc (queue → (memory, vcores) shares) as held from now on.
// Time running backwards books nothing.
func (b *curveBook) advance(now time.Time, alloc map[string][2]float64) {
	if !b.lastAt.IsZero() && now.After(b.lastAt) {
		from := b.lastAt
		if lim := now.Add(-time.Duration(b.n+1) * b.slot); from.Before(lim) {
			from = lim // older service has left the window
		}
		b.roll(b.index(now))
		for t := from; t.Before(now); {
			idx := b.index(t)
			end := time.Unix(0, (idx+1)*int64(b.slot))
			if end.After(now) {
				end = now
			}
			if idx > b.cur-int64(b.n) {
				p, d := b.pos(idx), end.Sub(t).Seconds()
				for q, h := range b.held {
					r := b.ring(q)
					r[p][0] += h[0] * d
					r[p][1] += h[1] * d
				}
			}
			t = end
		}
	} else if b.lastAt.IsZero() {
		b.cur = b.index(now)
	}
	if b.lastAt.IsZero() || now.After(b.lastAt) {
		b.lastAt = now
	}
	clear(b.held)
	for q, a := range alloc {
		if a[0] > 0 || a[1] > 0 {
			b.held[q] = a
		}
	}
}

// roll makes idx the newest slot, zeroing the slots it skips over.
func (b *curveBook) roll(idx int64) {
	if idx <= b.cur {
		return
	}
	from := max(b.cur+1, idx-int64(b.n)+1)
	for i := from; i <= idx; i++ {
		p := b.pos(i)
		for _, r := range b.recv {
			r[p] = [2]float64{}
		}
	}
	b.cur = idx
}

// entitled is Y(t), the rate q's curve entitles it to now (draft §3,
// "Resource Allocation" step 1), per resource:
//
//	Y = min over slot starts t1 in the look-back of (S(now+δ−t1) − W(t1, now))/δ, capped at α
//
// where W is the service received since t1 and δ the slot. It can be
// negative: the queue has received more than its curve allows.
func (b *curveBook) entitled(q ServiceQueue, now time.Time) [2]float64 {
	y := q.Alpha.vec()
	r := b.recv[q.Name]
	delta := b.slot.Seconds()
	var w [2]float64
	for j := range b.n {
		idx := b.cur - int64(j)
		if r != nil {
			s := r[b.pos(idx)]
			w[0] += s[0]
			w[1] += s[1]
		}
		t1 := time.Unix(0, idx*int64(b.slot))
		s := q.curve(now.Sub(t1).Seconds() + delta)
		for k := range 2 {
			y[k] = math.Min(y[k], (s[k]-w[k])/delta)
		}
	}
	return y
}

// received is q's mean rate over the look-back window.
func (b *curveBook) received(q string) [2]float64 {
	var w [2]float64
	for _, s := range b.recv[q] {
		w[0] += s[0]
		w[1] += s[1]
	}
	span := float64(b.n) * b.slot.Seconds()
	return [2]float64{w[0] / span, w[1] / span}
}

// curveState is the service-curve accounting, for persistence.
type curveState struct {
	Slot   time.Duration `json:"slot"`
	Slots  int           `json:"slots"`
	Cur    int64         `json:"cur"`
	LastAt time.Time     `json:"last_at"`
	Held   map[string]Rate
	// Received per queue, oldest slot first, ending at Cur.
	Received map[string][]Rate `json:"received"`
}

func (b *curveBook) state() curveState {
	s := curveState{Slot: b.slot, Slots: b.n, Cur: b.cur, LastAt: b.lastAt, Held: map[string]Rate{}, Received: map[string][]Rate{}}
	for q, h := range b.held {
		s.Held[q] = rateOf(h)
	}
	for q, r := range b.recv {
		out := make([]Rate, b.n)
		for j := range b.n {
			out[j] = rateOf(r[b.pos(b.cur-int64(b.n-1-j))])
		}
		s.Received[q] = out
	}
	return s
}

// restore loads s when it was kept with the same slot and window; it
// reports whether it did.
func (b *curveBook) restore(s curveState) bool {
	if s.Slot != b.slot || s.Slots != b.n {
		return false
	}
	b.cur, b.lastAt = s.Cur, s.LastAt
	clear(b.held)
	for q, h := range s.Held {
		b.held[q] = h.vec()
	}
	clear(b.recv)
	for q, rs := range s.Received {
		if len(rs) != b.n {
			continue
		}
		r := b.ring(q)
		for j, v := range rs {
			r[b.pos(b.cur-int64(b.n-1-j))] = v.vec()
		}
	}
	return true
}

// sortedQueues lists the configured queue names in level order, then
// configuration order.
func sortedQueues(qs []ServiceQueue) []int {
	idx := make([]int, len(qs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return qs[a].Level - qs[b].Level })
	return idx
}
