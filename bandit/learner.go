package bandit

import (
	"math"
	"slices"
	"sync"
)

// Learner holds the preference matrix H over job kinds and learns it with
// the gradient-bandit updates of the paper (Eqs. 2–3). H[given][a] is the
// preference for starting kind a while kind given runs; π(·|given) is the
// softmax of row given over every known kind.
//
// A Learner is safe for concurrent use: readers (Pref, Prob, Mix, Kinds,
// Snapshot, Sub) share a read lock, writers (Add, AddSimilar, Update,
// Restore, Reset, Changes) take the write lock. Every method is O(K) or
// better for K kinds, except Restore, Snapshot and KindObservations
// (O(K²)), AddSimilar (O(K·S) for S similar kinds), Mix (O(K·J + N) for J
// context kinds and N candidates), Sub (O(R·K) for R rows) and Changes
// (O(R·K) for R rows changed; O(K²) after a whole-state change). It must
// not be copied after first use.
type Learner struct {
	mu  sync.RWMutex
	cfg Config // defaults filled in

	kinds   []string
	index   map[string]int
	h       [][]float64 // h[given][a]
	base    float64     // global baseline (mean, or recency average)
	rowBase []float64   // per-row mean of the goodness observed with that row's kind running
	obs     int64
	rowObs  []int64
	pairObs [][]int64 // pairObs[given][chosen]
	reject  int64

	// What changed since the last Changes (delta.go).
	changes changes

	// Update's scratch rows, used under the write lock.
	pi, next []float64
	// Mix's scratch buffers (*mixScratch), one per concurrent reader.
	scratch sync.Pool
}

// New returns an empty learner (no kinds). Zero fields of cfg take their
// defaults. New panics if cfg.Validate fails: validate user-supplied
// configuration first, where the error can be reported.
func New(cfg Config) *Learner {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	l := &Learner{cfg: cfg.withDefaults()}
	l.resetLocked()
	return l
}

// Config returns the learner's configuration, defaults filled in.
func (l *Learner) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

func (l *Learner) resetLocked() {
	l.kinds = []string{}
	l.index = map[string]int{}
	l.h = [][]float64{}
	l.base = 0
	l.rowBase = []float64{}
	l.obs = 0
	l.rowObs = []int64{}
	l.pairObs = [][]int64{}
	l.reject = 0
	l.pi, l.next = nil, nil
	l.changes.everything()
}

// Reset forgets every kind, preference, baseline and counter, keeping the
// configuration: the learner is as New(l.Config()) returned it.
func (l *Learner) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resetLocked()
}

// Add makes kind known, with zero preferences in its new row and column,
// except H(kind|kind) = −Config.SelfPrior.
// The existing preferences are untouched (the probabilities of existing rows
// change, since their softmax now also spreads over kind). Adding a known
// kind, or the empty string, does nothing.
func (l *Learner) Add(kind string) {
	if kind == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addLocked(kind, nil, nil)
}

// addLocked appends kind with the given new row (length K+1) and column
// (length K); a nil row means zeros with the self prior on the diagonal, a
// nil column zeros. It returns kind's index.
func (l *Learner) addLocked(kind string, row, col []float64) int {
	if i, ok := l.index[kind]; ok {
		return i
	}
	k := len(l.kinds)
	for r := range l.h {
		v := 0.0
		if col != nil {
			v = col[r]
		}
		l.h[r] = append(l.h[r], v)
		l.pairObs[r] = append(l.pairObs[r], 0)
	}
	if row == nil {
		row = make([]float64, k+1)
		if p := l.cfg.SelfPrior; p > 0 {
			row[k] = -p
			if c := l.cfg.Clip; c > 0 && p > c {
				row[k] = -c
			}
		}
	}
	l.h = append(l.h, row)
	l.pairObs = append(l.pairObs, make([]int64, k+1))
	l.rowBase = append(l.rowBase, 0)
	l.rowObs = append(l.rowObs, 0)
	l.kinds = append(l.kinds, kind)
	l.index[kind] = k
	l.changes.any = true
	return k
}

// AddSimilar adds a new recurring kind warm-started from kinds it resembles
// (the paper's future work: "taking similarity between jobs into account").
// sim maps known kinds to non-negative similarity weights; the weights are
// normalised to sum to 1, and unknown kinds, non-positive and non-finite
// weights are ignored. With w the normalised weights:
//
//	H(b|kind)    = Σ_s w_s H(b|s)              for every known b (its row)
//	H(kind|r)    = Σ_s w_s H(s|r)              for every known r (its column)
//	H(kind|kind) = Σ_s Σ_t w_s w_t H(t|s)
//
// Existing preferences are untouched. With no usable weight it is Add. If
// kind is already known (or empty), AddSimilar does nothing. Baselines and
// counters of the new row start at zero.
func (l *Learner) AddSimilar(kind string, sim map[string]float64) {
	if kind == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.index[kind]; ok {
		return
	}
	type sw struct {
		i int
		w float64
	}
	var ws []sw
	maxw := 0.0
	for name, w := range sim {
		i, ok := l.index[name]
		if !ok || !(w > 0) || math.IsInf(w, 0) {
			continue
		}
		ws = append(ws, sw{i, w})
		maxw = max(maxw, w)
	}
	// Sum in kind order so the result does not depend on map iteration order.
	slices.SortFunc(ws, func(a, b sw) int { return a.i - b.i })
	total := 0.0
	for j := range ws {
		ws[j].w /= maxw // scale first: the sum of huge weights must not overflow
		total += ws[j].w
	}
	if len(ws) == 0 || !(total > 0) {
		l.addLocked(kind, nil, nil)
		return
	}
	k := len(l.kinds)
	row := make([]float64, k+1)
	col := make([]float64, k)
	for _, s := range ws {
		w := s.w / total
		for b, v := range l.h[s.i] {
			row[b] += w * v
		}
		for r := range l.h {
			col[r] += w * l.h[r][s.i]
		}
	}
	for _, t := range ws {
		row[k] += t.w / total * row[t.i]
	}
	l.addLocked(kind, row, col)
	l.changes.everything() // the new column changed every row
}

// Kinds returns the known kinds in the order they were added.
func (l *Learner) Kinds() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.kinds)
}

// Update applies one observation: kind chosen was started while kind given
// was running, and their co-location scored goodness g (paper Eq. 1).
//
// First g is folded into the baseline Ḡ (so Ḡ includes g, as the paper
// defines it), then, with π = π(·|given) taken before the update,
//
//	H(chosen|given) += γ(g−Ḡ)(1−π(chosen|given))    (Eq. 2)
//	H(b|given)      −= γ(g−Ḡ)π(b|given)   for every other known b   (Eq. 3)
//
// and, with Config.Clip > 0, the row is clamped to [−Clip, Clip]. Unknown
// kinds are added first (chosen, then given). An update is rejected — not
// applied at all, and counted in Snapshot().Rejected — when g is NaN or
// ±Inf, when a kind is the empty string, or when it would make a preference
// or a baseline non-finite, or would spread the row's preferences over more
// than the float64 range (only possible for |g| near the float64 limit;
// unknown kinds stay added in that case). O(K).
//
// The counters saturate at MaxCount: once Observations reaches it, updates
// still move the preferences and the baselines (as means over MaxCount
// observations) but no counter grows, so they stay consistent and none
// can overflow.
func (l *Learner) Update(chosen, given string, g float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if chosen == "" || given == "" || math.IsNaN(g) || math.IsInf(g, 0) {
		l.rejectLocked()
		return
	}
	ci := l.addLocked(chosen, nil, nil)
	gi := l.addLocked(given, nil, nil)

	// The counters grow while the total is below MaxCount; a row's and a
	// pair's are at most the total, so they are below it too.
	counting := l.obs < MaxCount
	n, rn := l.obs, l.rowObs[gi]
	if counting {
		n, rn = n+1, rn+1
	}
	// Baselines, computed aside and committed only if the update is finite.
	base := l.base + (g-l.base)/float64(n) // global mean, g included
	if l.cfg.Baseline == Recency {
		a := l.cfg.RecencyAlpha
		step := a / (1 - math.Pow(1-a, float64(n))) // unbiased: the first step is 1
		base = l.base + step*(g-l.base)
	}
	rowBase := l.rowBase[gi] + (g-l.rowBase[gi])/float64(max(rn, 1)) // rn is 0 only for a new row past saturation
	ref := base
	if l.cfg.Baseline == RowMean {
		ref = rowBase
	}
	d := l.cfg.StepSize * (g - ref)
	if !finite(base) || !finite(rowBase) || !finite(d) {
		l.rejectLocked()
		return
	}

	row := l.h[gi]
	k := len(row)
	if cap(l.pi) < k {
		l.pi = make([]float64, k, 2*k)
		l.next = make([]float64, k, 2*k)
	}
	pi, next := l.pi[:k], l.next[:k]
	softmax(row, pi)
	clip := l.cfg.Clip
	lo, hi := math.Inf(1), math.Inf(-1)
	for b, hb := range row {
		v := hb - d*pi[b]
		if b == ci {
			v = hb + d*(1-pi[b])
		}
		if clip > 0 {
			if v < -clip {
				v = -clip
			} else if v > clip {
				v = clip
			}
		}
		next[b] = v
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	// v is never NaN (H, d and π are finite); an overflow to ±Inf shows in
	// lo or hi. The softmax also needs the span hi − lo finite.
	if !finite(hi - lo) {
		l.rejectLocked()
		return
	}
	copy(row, next)
	l.base, l.obs = base, n
	l.rowBase[gi], l.rowObs[gi] = rowBase, rn
	if counting {
		l.pairObs[gi][ci]++
	}
	l.changes.row(gi)
}

// rejectLocked counts a rejected update, up to MaxCount.
func (l *Learner) rejectLocked() {
	if l.reject < MaxCount {
		l.reject++
	}
	l.changes.any = true
}

// Pref returns H(a|given); 0 when either kind is unknown (the value it would
// have once added).
func (l *Learner) Pref(a, given string) float64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ai, ok1 := l.index[a]
	gi, ok2 := l.index[given]
	if !ok1 || !ok2 {
		return 0
	}
	return l.h[gi][ai]
}

// Observed returns H(a|given) centred on the row's observed pairs — minus
// the mean preference of the kinds that have been started beside given at
// least once — and how many observations updated the pair (a|given). A
// pair never observed returns (0, 0): preferences are defined only up to a
// constant per row, and an unobserved pair's value is what Eq. 3's pushes
// left there, not evidence. O(K).
func (l *Learner) Observed(a, given string) (float64, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ai, ok1 := l.index[a]
	gi, ok2 := l.index[given]
	if !ok1 || !ok2 || l.pairObs[gi][ai] == 0 {
		return 0, 0
	}
	var sum float64
	var n int
	for b, c := range l.pairObs[gi] {
		if c > 0 {
			sum += l.h[gi][b]
			n++
		}
	}
	return l.h[gi][ai] - sum/float64(n), l.pairObs[gi][ai]
}

// RowObservations returns how many observations updated row given (the
// preferences of kinds started beside given); 0 for an unknown kind. O(1).
func (l *Learner) RowObservations(given string) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	gi, ok := l.index[given]
	if !ok {
		return 0
	}
	return l.rowObs[gi]
}

// Prob returns π(a|given), the softmax of row given at a. Unknown kinds are
// treated as if they had been added first (zero preferences, and they join
// the set the softmax spreads over), so Prob does not change when the caller
// Adds them. O(K).
func (l *Learner) Prob(a, given string) float64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ai, aok := l.index[a]
	gi, gok := l.index[given]
	u := 0 // distinct unknown kinds among a and given
	if !aok {
		u++
	}
	if !gok && given != a {
		u++
	}
	if !gok {
		return 1 / float64(len(l.kinds)+u) // a zero row: uniform
	}
	row := l.h[gi]
	m := maxOf(row)
	if u > 0 {
		m = max(m, 0)
	}
	z := float64(u) * math.Exp(-m)
	for _, v := range row {
		z += math.Exp(v - m)
	}
	ha := 0.0
	if aok {
		ha = row[ai]
	}
	return math.Exp(ha-m) / z
}

// softmax writes the softmax of h into p (same length), subtracting the
// maximum first so no exp overflows; p sums to 1 and every p[i] is finite.
func softmax(h, p []float64) {
	if len(h) == 0 {
		return
	}
	m := maxOf(h)
	z := 0.0
	// An update moves equal entries alike, so a wide row is mostly one
	// value (the kinds never observed beside its kind): an entry equal to
	// the one before reuses its exponential, the same number.
	lastV, lastE := math.NaN(), 0.0
	for i, v := range h {
		e := lastE
		if v != lastV {
			e = math.Exp(v - m)
			lastV, lastE = v, e
		}
		p[i] = e
		z += e
	}
	for i := range p {
		p[i] /= z
	}
}

// maxOf returns the largest element of a non-empty h that holds no NaN.
// (slices.Max and the max builtin handle NaN and ±0, and are several times
// slower on the hot paths.)
func maxOf(h []float64) float64 {
	m := h[0]
	for _, v := range h[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
