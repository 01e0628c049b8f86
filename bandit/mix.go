package bandit

import (
	"fmt"
	"math"
	"slices"
)

// mixScratch holds Mix's buffers; Learner.scratch pools them so a Mix call
// allocates nothing in the steady state.
type mixScratch struct {
	idx     []int32   // candidate → kind index, −1 = unknown
	ctxRow  []int32   // context → kind index, −1 = unknown (a zero row)
	ctxMax  []float64 // context → m, the max of its row (0 for unknown)
	ctxOff  []float64 // context → log(w/W) − log Z of its row
	best    []float64 // kind → max over contexts of H + off; [K] = any unknown kind
	e       []float64 // kind → Σ over contexts of exp(H + off − shift); [K] = unknown
	ex      []float64 // exp(H_j[b] − m_j) for each known context j, K per context
	unknown map[string]struct{}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// Mix scores candidates against a context of running kinds: with weights w,
//
//	out[i] ∝ Σ_j w_j π(candidates[i] | given[j]) / Σ_j w_j
//
// renormalised so that out sums to 1 over the candidates. Weights that are
// negative, NaN or ±Inf count as 0; nil weights mean equal weights. With no
// context (empty given, or every weight 0) out is uniform. Unknown kinds,
// among the candidates or the context, are treated as kinds with zero
// preferences (they join the set each softmax spreads over). That is what
// Add gives them except on the diagonal: Add sets H(kind|kind) to
// −Config.SelfPrior, Mix takes an unknown kind's to be 0. So Mix does not
// change when the caller Adds unknown kinds first only when SelfPrior is 0
// or no unknown kind is both a candidate and in the context; callers that
// use a self prior Add kinds as their jobs arrive. Candidates may repeat;
// each occurrence gets the same score before the renormalisation.
//
// Mix is computed in log space with one shift for the whole call: the best
// candidate's top term is exp(0), so out never underflows to all zeros and
// never holds NaN or Inf, however large the preferences. Cost: one map
// lookup per candidate plus K·J exponentials for K known kinds and J
// context kinds (2·K·J when every candidate is below e^−300 in every
// context); no allocation in the steady state.
//
// Mix panics if len(out) != len(candidates), or if weights is not nil and
// len(weights) != len(given).
func (l *Learner) Mix(candidates, given []string, weights []float64, out []float64) {
	if len(out) != len(candidates) {
		panic(fmt.Sprintf("bandit: Mix: len(out) = %d, want len(candidates) = %d", len(out), len(candidates)))
	}
	if weights != nil && len(weights) != len(given) {
		panic(fmt.Sprintf("bandit: Mix: len(weights) = %d, want len(given) = %d", len(weights), len(given)))
	}
	n := len(candidates)
	if n == 0 {
		return
	}
	maxw := 0.0
	for j := range given {
		maxw = max(maxw, mixWeight(weights, j))
	}
	if maxw == 0 {
		uniform(out)
		return
	}
	wsum := 0.0 // of w/maxw, so it cannot overflow
	for j := range given {
		wsum += mixWeight(weights, j) / maxw
	}

	l.mu.RLock()
	defer l.mu.RUnlock()
	s, _ := l.scratch.Get().(*mixScratch)
	if s == nil {
		s = &mixScratch{unknown: map[string]struct{}{}}
	}
	defer l.scratch.Put(s)

	k := len(l.kinds)
	u := s.resolve(l.index, candidates, given)
	s.contextRows(l.index, l.h, given, weights, maxw, wsum, k, u)
	s.bestTerms(l.h, k)
	shift := s.shift(n, k)
	s.sums(l.h, k, shift)
	total := 0.0
	for i, ki := range s.idx[:n] {
		b := int(ki)
		if b < 0 {
			b = k
		}
		out[i] = s.e[b]
		total += out[i]
	}
	for i := range out {
		out[i] /= total
	}
}

// mixWeight is the weight Mix gives context j: 1 when weights is nil, else
// weights[j] when it is positive and finite, else 0.
func mixWeight(weights []float64, j int) float64 {
	if weights == nil {
		return 1
	}
	if w := weights[j]; w > 0 && !math.IsInf(w, 1) {
		return w
	}
	return 0
}

// resolve maps the candidates to kind indexes in s.idx (−1 for an unknown
// kind) and returns u, the number of distinct unknown kinds among the
// candidates and the context.
func (s *mixScratch) resolve(index map[string]int, candidates, given []string) (u int) {
	s.idx = grow(s.idx, len(candidates))
	for i, c := range candidates {
		if ki, ok := index[c]; ok {
			s.idx[i] = int32(ki)
		} else {
			s.idx[i] = -1
			s.unknown[c] = struct{}{}
		}
	}
	for _, g := range given {
		if _, ok := index[g]; !ok {
			s.unknown[g] = struct{}{}
		}
	}
	u = len(s.unknown)
	clear(s.unknown)
	return u
}

// contextRows fills s.ctxRow, s.ctxMax, s.ctxOff and s.ex for the context
// kinds with a positive weight, k known kinds and u unknown ones.
//
// Per context kind j: its row maximum m_j and off_j = log(w_j/W) − log Z_j,
// so that exp((H_j[b] − m_j) + off_j) = (w_j/W)·π(b|given_j). Z_j runs over
// the K known kinds plus the u unknown ones (H = 0). Update and Restore
// keep every row's span finite, so H − m is finite and ≤ 0, and adding
// off (in [−800, 0]) cannot overflow.
func (s *mixScratch) contextRows(index map[string]int, h [][]float64, given []string, weights []float64, maxw, wsum float64, k, u int) {
	s.ctxRow, s.ctxMax, s.ctxOff, s.ex = s.ctxRow[:0], s.ctxMax[:0], s.ctxOff[:0], s.ex[:0]
	for j, g := range given {
		w := mixWeight(weights, j) / maxw
		if w == 0 {
			continue
		}
		lw := math.Log(w / wsum)
		gi, ok := index[g]
		if !ok {
			s.ctxRow = append(s.ctxRow, -1)
			s.ctxMax = append(s.ctxMax, 0)
			s.ctxOff = append(s.ctxOff, lw-math.Log(float64(k+u)))
			continue
		}
		row := h[gi]
		m := maxOf(row)
		if u > 0 {
			m = max(m, 0)
		}
		z := float64(u) * math.Exp(-m)
		at := len(s.ex)
		s.ex = slices.Grow(s.ex, k)[:at+k]
		ex := s.ex[at:]
		for b, v := range row {
			x := math.Exp(v - m)
			ex[b] = x
			z += x
		}
		s.ctxRow = append(s.ctxRow, int32(gi))
		s.ctxMax = append(s.ctxMax, m)
		s.ctxOff = append(s.ctxOff, lw-math.Log(z))
	}
}

// bestTerms sets s.best[b] = max_j ((H_j[b] − m_j) + off_j) over the
// context rows; index k stands for every unknown kind.
func (s *mixScratch) bestTerms(h [][]float64, k int) {
	s.best = grow(s.best, k+1)
	for b := range s.best {
		s.best[b] = math.Inf(-1)
	}
	for j, gi := range s.ctxRow {
		m, off := s.ctxMax[j], s.ctxOff[j]
		if gi < 0 {
			for b := range s.best {
				s.best[b] = max(s.best[b], off)
			}
			continue
		}
		best := s.best[:len(h[gi])]
		for b, v := range h[gi] {
			if t := (v - m) + off; t > best[b] {
				best[b] = t
			}
		}
		s.best[k] = max(s.best[k], (0-m)+off)
	}
}

// shift is the largest term over the first n candidates, the ones actually
// scored (s.best of their kind; index k for an unknown one).
func (s *mixScratch) shift(n, k int) float64 {
	shift := math.Inf(-1)
	for _, ki := range s.idx[:n] {
		b := int(ki)
		if b < 0 {
			b = k
		}
		if t := s.best[b]; t > shift {
			shift = t
		}
	}
	return shift
}

// sums sets e[b] = Σ_j exp((H_j[b] − m_j) + off_j − shift), about 1 for the
// kind that set the shift and ≤ J for every candidate kind; index k stands
// for every unknown kind.
//
// Usually the best candidate is not astronomically unlikely (shift >
// −300), and the exponentials of the normaliser pass are reused:
// exp(H − m)·exp(off − shift), with the factor ≤ e^300. A term that
// underflowed there is below e^−708 of its row, so below e^−408 of the
// best candidate: it cannot matter. Otherwise each term is recomputed
// whole, which stays exact however small the probabilities.
func (s *mixScratch) sums(h [][]float64, k int, shift float64) {
	s.e = grow(s.e, k+1)
	clear(s.e)
	at := 0
	for j, gi := range s.ctxRow {
		m, off := s.ctxMax[j], s.ctxOff[j]
		if gi < 0 {
			x := math.Exp(off - shift)
			for b := range s.e {
				s.e[b] += x
			}
			continue
		}
		e := s.e[:k]
		if shift > -300 {
			f := math.Exp(off - shift)
			for b, x := range s.ex[at : at+k] {
				e[b] += x * f
			}
		} else {
			for b, v := range h[gi] {
				e[b] += math.Exp((v - m) + off - shift)
			}
		}
		at += k
		s.e[k] += math.Exp((0 - m) + off - shift)
	}
}

func uniform(p []float64) {
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
}
