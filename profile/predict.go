package profile

// PredictGoodness is the goodness (Eq. 1) of the usage p predicts for a
// node running jobs: mean demands, a saturated resource shared in
// proportion to demand, CPU starved by a saturated disk as I/O wait.
//
// On a Model it reads a known kind's covariances only for a node whose
// load could come near a capacity at the largest variance the model
// allows: elsewhere they do not change the prediction (the learning tick
// predicts every co-located node, and a column of the covariance costs a
// solve over the kind's component of the co-location graph).
func PredictGoodness(p Profiles, jobs []KindCount) float64 {
	return NewPredictor(p).Goodness(jobs)
}

// Predictor is PredictGoodness for many nodes over one state of the
// Profiles: each kind's profile and each pair's covariance is read once.
// It must not outlive that state (a Model's next Observe).
type Predictor struct{ v *View }

// NewPredictor returns a Predictor over p.
func NewPredictor(p Profiles) *Predictor {
	sc := &Scorer{Profiles: p, Objective: ObjectiveGoodness}
	v := sc.NewView(nil)
	v.demandOnly = true
	return &Predictor{v: v}
}

// Goodness is PredictGoodness of jobs.
func (pr *Predictor) Goodness(jobs []KindCount) float64 {
	return pr.v.node(jobs, "", 0, false, Vector{})
}

// GoodnessOn is Goodness on a node of size (Observation.Size).
func (pr *Predictor) GoodnessOn(jobs []KindCount, size Vector) float64 {
	return pr.v.node(jobs, "", 0, false, size)
}

// Prepare reads ahead what predicting these compositions needs, so that
// Goodness finds it: over a *Model, the covariance columns of their kinds,
// solved in parallel (Model.solveColumns; the same numbers Goodness would
// compute one at a time). Optional.
func (pr *Predictor) Prepare(comps ...[]KindCount) {
	m, ok := pr.v.sc.Profiles.(*Model)
	if !ok {
		return
	}
	var kinds []string
	for _, jobs := range comps {
		for _, j := range jobs {
			kinds = append(kinds, j.Kind)
		}
	}
	m.solveColumns(kinds)
}

// Speeds puts in out[i] the progress rate (solo seconds of work per second)
// the mean profiles predict for the containers of jobs[i] on a node
// running jobs: each capacity's load is the baseline plus the containers'
// demands, a capacity asked beyond 1 is shared in proportion to demand,
// and a container runs at the pace of its most overcommitted resource (as
// the scorer's rate objective, at the means).
func Speeds(p Profiles, jobs []KindCount, out []float64) []float64 {
	return SpeedsOn(p, jobs, Vector{}, out)
}

// SpeedsOn is Speeds on a node of size (Observation.Size): each demand a
// fraction of that node, its amount divided by the size.
func SpeedsOn(p Profiles, jobs []KindCount, size Vector, out []float64) []float64 {
	out = out[:0]
	b := p.Baseline()
	load := [ncap]float64{b[CPU], b[DiskRead] + b[DiskWrite], b[NetIn], b[NetOut]}
	needs := make([][ncap]float64, len(jobs))
	for i, j := range jobs {
		d := p.Profile(j.Kind).Demand
		var std Vector
		onSize(&d, &std, size)
		needs[i] = [ncap]float64{d[CPU], d[DiskRead] + d[DiskWrite], d[NetIn], d[NetOut]}
		for r := range ncap {
			load[r] += j.Containers * needs[i][r]
		}
	}
	var over [ncap]float64
	for r := range ncap {
		over[r] = max(1, load[r])
	}
	for i := range jobs {
		out = append(out, speed(needs[i], over))
	}
	return out
}
