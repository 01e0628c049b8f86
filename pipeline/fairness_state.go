package pipeline

import (
	"maps"
	"slices"
	"time"
)

// FairnessState is what the fairness stage remembers between decisions:
// the DRF deficits, the time of the last long-term update and the service
// curves' accounting. The daemon stores it with every admission and
// restores it on start, so a restart resets nobody's debt.
type FairnessState struct {
	Deficits map[string]float64 `json:"deficits,omitempty"`
	LastAt   time.Time          `json:"last_at"`
	Curves   *curveState        `json:"curves,omitempty"`
}

// FairnessState returns the fairness stage's memory; ok is false when
// fairness is off.
func (p *Pipeline) FairnessState() (s FairnessState, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fair
	if f == nil {
		return s, false
	}
	s = FairnessState{Deficits: maps.Clone(f.deficit), LastAt: f.lastAt}
	if f.curves != nil {
		cs := f.curves.book.state()
		s.Curves = &cs
	}
	return s, true
}

// RestoreFairness loads a state FairnessState returned, before the first
// decision. It reports what it could not keep: the curve accounting when
// burst_period or slot changed since (it starts afresh), or everything when
// fairness is off ("" when all was restored).
func (p *Pipeline) RestoreFairness(s FairnessState) (dropped string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fair
	if f == nil {
		return "fairness is off: the stored fairness state is ignored"
	}
	clear(f.deficit)
	for g, d := range s.Deficits {
		f.deficit[g] = d
	}
	f.lastAt = s.LastAt
	if f.curves != nil && s.Curves != nil && !f.curves.book.restore(*s.Curves) {
		return "fairness.burst_period or fairness.slot changed: the service-curve accounting starts afresh"
	}
	return ""
}

// QueuesReport is the fairness stage's view of the queues at the last
// decision, for operators (GET /v1/queues).
type QueuesReport struct {
	Enabled bool         `json:"enabled"`
	Mode    fairnessMode `json:"mode,omitempty"`
	GroupBy groupBy      `json:"group_by,omitempty"`
	// At is the last decision's time; zero before the first.
	At            time.Time     `json:"at"`
	BurstPeriodNS int64         `json:"burst_period_ns,omitempty"`
	Queues        []QueueStatus `json:"queues"`
}

// QueueStatus is one queue: its contract and admission control's verdict
// (curves mode), and its service at the last decision. Rates are shares of
// the cluster's capacity.
type QueueStatus struct {
	Name      string    `json:"name"`
	Members   []string  `json:"members,omitempty"`
	Class     string    `json:"class"`
	Level     int       `json:"level,omitempty"`
	Guarantee guarantee `json:"guarantee"`
	Reason    string    `json:"reason,omitempty"`
	Alpha     *Rate     `json:"alpha,omitempty"`
	Beta      *Rate     `json:"beta,omitempty"`
	BurstNS   int64     `json:"burst_ns,omitempty"`
	Weight    float64   `json:"weight"`
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

// Queues reports the queues as of the last decision: in curves mode every
// configured queue, then the elastic groups seen; in deficit mode the
// groups seen.
func (p *Pipeline) Queues() QueuesReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fair
	if f == nil {
		return QueuesReport{Queues: []QueueStatus{}}
	}
	rep := QueuesReport{Enabled: true, Mode: f.c.Mode, GroupBy: f.c.GroupBy, At: f.at, Queues: []QueueStatus{}}
	if rep.Mode == "" {
		rep.Mode = FairnessDeficit
	}
	seen := map[string]bool{}
	if cr := f.curves; cr != nil {
		rep.BurstPeriodNS = int64(cr.period)
		for _, i := range cr.order {
			q, a := cr.queues[i], cr.adm[i]
			seen[q.Name] = true
			alpha, beta := q.Alpha, q.beta()
			st := f.status(q.Name)
			st.Members, st.Class, st.Level, st.Guarantee, st.Reason = slices.Clone(q.Members), a.Class, q.Level, a.Guarantee, a.Reason
			st.Alpha, st.Beta, st.BurstNS = &alpha, &beta, int64(q.Burst)
			if a.Guarantee != GuaranteeElastic {
				e, o := rateOf(cr.entitled[i]), rateOf(cr.owed[i])
				st.Entitled, st.Owed = &e, &o
			}
			rcv := rateOf(cr.book.received(q.Name))
			st.Received = &rcv
			rep.Queues = append(rep.Queues, st)
		}
	}
	var rest []string
	for g := range f.pending {
		rest = append(rest, g)
	}
	for g := range f.alloc {
		rest = append(rest, g)
	}
	for g := range f.deficit {
		rest = append(rest, g)
	}
	slices.Sort(rest)
	for _, g := range slices.Compact(rest) {
		if seen[g] {
			continue
		}
		st := f.status(g)
		st.Class, st.Guarantee = "batch", GuaranteeElastic
		rep.Queues = append(rep.Queues, st)
	}
	return rep
}

// status is group g's service at the last decision.
func (f *fairnessStage) status(g string) QueueStatus {
	a := f.alloc[g]
	return QueueStatus{
		Name: g, Weight: f.weight(g), Held: rateOf(a), Share: f.reduce(a, f.capa),
		Deficit: f.deficit[g], Pending: f.pending[g],
	}
}
